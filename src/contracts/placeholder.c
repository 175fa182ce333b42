/* placeholder */ typedef int aka_contracts_placeholder_;
