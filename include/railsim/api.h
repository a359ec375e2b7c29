/*
 * api.h - what a public railsim header needs before its declarations:
 * RS_API marks a function the shared library exports (the library is built
 * with -fvisibility=hidden, so nothing else leaves it), and
 * RS_BEGIN_DECLS/RS_END_DECLS give the declarations C linkage when the
 * header is read by a C++ compiler.
 */
#ifndef RS_API_H
#define RS_API_H

#if defined(__GNUC__) || defined(__clang__)
#define RS_API __attribute__((visibility("default")))
#else
#define RS_API
#endif

#ifdef __cplusplus
#define RS_BEGIN_DECLS extern "C" {
#define RS_END_DECLS }
#else
#define RS_BEGIN_DECLS
#define RS_END_DECLS
#endif

#endif
