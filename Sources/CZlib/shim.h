#ifndef ATTACHMENTKIT_CZLIB_SHIM_H
#define ATTACHMENTKIT_CZLIB_SHIM_H
#include <zlib.h>
#endif
