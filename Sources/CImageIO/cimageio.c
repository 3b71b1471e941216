#include "cimageio.h"
