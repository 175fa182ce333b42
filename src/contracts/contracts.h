/* contracts.h — placeholder; replaced by the contracts work. */
#ifndef AKA_CONTRACTS_H
#define AKA_CONTRACTS_H
#endif
