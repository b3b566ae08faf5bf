#ifndef ATTACHMENTKIT_CMAGIC_SHIM_H
#define ATTACHMENTKIT_CMAGIC_SHIM_H
#include <magic.h>
#endif
