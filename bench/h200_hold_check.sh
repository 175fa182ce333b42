. bench/device_install.sh
for spec in rmsnorm:seeds/Triton/kernel.py:Triton silu_and_mul:seeds/Triton/kernel.py:Triton row_sum_cuda:seeds/Cuda/kernel.cu:Cuda; do
  IFS=: read op k fw <<<"$spec"
  s=$(date +%s)
  aka eval --op-dir examples/ops/$op --kernel examples/ops/$op/$k --framework $fw --platform nvidia/h200 --json >$OUT/$op.json 2>$OUT/$op.err
  echo "$op exit $? $(( $(date +%s) - s )) s"
  python3 -c "
import json,sys; r=json.load(open('$OUT/$op.json'))['result']; print(r.get('latency_us_by_shape'), r.get('latency_median_us_by_shape'))"
done
