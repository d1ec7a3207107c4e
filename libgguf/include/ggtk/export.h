/* export.h - the export macro of ggtk's libraries and their version.
 *
 * The libraries are built with -fvisibility=hidden: only declarations marked GGTK_API are
 * exported from libgguf.so and libinfer.so, so their internal functions never bind to another
 * library's symbols of the same name (ggml's, say) and programs see only the documented API.
 */
#ifndef GGTK_EXPORT_H
#define GGTK_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define GGTK_API __attribute__((visibility("default")))
#else
#define GGTK_API
#endif

/* The version of the headers: MAJOR changes with the ABI (the soname is libgguf.so.MAJOR),
 * MINOR with additions, PATCH with fixes. */
#define GGTK_VERSION_MAJOR 0
#define GGTK_VERSION_MINOR 2
#define GGTK_VERSION_PATCH 0
#define GGTK_VERSION_STRING "0.2.0"
/* One number that grows with every release: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define GGTK_VERSION_NUMBER (GGTK_VERSION_MAJOR * 10000 + GGTK_VERSION_MINOR * 100 + GGTK_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library linked at run time, as GGTK_VERSION_NUMBER; compare it with the
 * macro to detect a program built against other headers. */
GGTK_API int ggtk_version_number(void);
/* The same as a string "MAJOR.MINOR.PATCH" (static storage). */
GGTK_API const char *ggtk_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* GGTK_EXPORT_H */
