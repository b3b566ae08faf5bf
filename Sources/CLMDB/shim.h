#ifndef ATTACHMENTKIT_CLMDB_SHIM_H
#define ATTACHMENTKIT_CLMDB_SHIM_H
#include <lmdb.h>
#endif
