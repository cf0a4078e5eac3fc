// Glibc's Swift module leaves out <sys/xattr.h>; this header brings in the file-owner calls
// (fgetxattr, fsetxattr, fremovexattr) and nothing else.
#include <sys/types.h>
#include <sys/xattr.h>
