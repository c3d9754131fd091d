/* alsa-lib writes its errors ("ALSA lib confmisc.c: cannot find card '0'") to standard error
 * while devices are probed, which is noise on a terminal. Its error handler is variadic, so it
 * is written in C: it formats the message and hands it to verbatim_alsa_message (Rust), which
 * logs it at debug level. */
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

extern void verbatim_alsa_message(const char *file, int line, const char *function, int err,
                                  const char *message);

static void forward(const char *file, int line, const char *function, int err, const char *fmt,
                    ...) {
    char message[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    verbatim_alsa_message(file, line, function, err, message);
}

void verbatim_route_alsa_messages(void) { snd_lib_error_set_handler(forward); }
