# hostile_artifacts.sh — red-team candidate: leaves artifacts designed to make the
# supervisor copy host files or write through links: a symlink to /etc/passwd,
# a directory symlink to /, a symlink inside a synced directory, a FIFO, plus
# one honest file. Also writes "victim-overwritten" to out.txt, which the test
# pre-planted on the host as a symlink to a victim file.
ln -s /etc/passwd leak
ln -s / dirlink
mkdir -p results
echo honest > results/ok.txt
ln -s /etc/passwd results/passwd-link
mkfifo results/fifo 2>/dev/null || true
echo honest > good.txt
echo victim-overwritten > out.txt
echo done
