/* SPDX-License-Identifier: MIT */
/* fdr/internal/visibility.h - the one export macro. libfdr is built with
 * -fvisibility=hidden; only what carries FDR_EXTERN (public API) or
 * FDR__EXTERN (internal symbols the inline fast path must reach) is exported. */
#ifndef FDR_INTERNAL_VISIBILITY_H
#define FDR_INTERNAL_VISIBILITY_H

#define FDR_EXTERN extern __attribute__((visibility("default")))
#define FDR__EXTERN extern __attribute__((visibility("default")))

#endif
