/* SPDX-License-Identifier: MIT */
/* fdr/version.h - the version of fdr, for programs and for the traces it
 * writes (env.tracer_* in the metadata). */
#ifndef FDR_VERSION_H
#define FDR_VERSION_H

#define FDR_VERSION_MAJOR 0
#define FDR_VERSION_MINOR 1
#define FDR_VERSION_PATCH 0
#define FDR_VERSION_STRING "0.1.0"

#endif
