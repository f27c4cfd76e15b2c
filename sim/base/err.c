#include "base/err.h"

#include <stdarg.h>
#include <string.h>

int err_set(llm_err *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int err_at(llm_err *e, const char *file, int line, const char *key,
           const char *fmt, ...)
{
    if (!e)
        return -1;
    char body[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (line > 0)
        snprintf(e->msg, sizeof e->msg, "%s:%d: %s: %s", file, line,
                 key ? key : "(file)", body);
    else
        snprintf(e->msg, sizeof e->msg, "%s: %s: %s", file,
                 key ? key : "(file)", body);
    return -1;
}
