#ifndef ATTACHMENTKIT_CCRYPTO_SHIM_H
#define ATTACHMENTKIT_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#endif
