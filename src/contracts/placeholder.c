/* placeholder.c — keeps the contracts library non-empty until its readers land; delete then. */
typedef int aka_contracts_placeholder_;
