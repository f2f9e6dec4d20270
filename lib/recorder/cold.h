/* SPDX-License-Identifier: MIT */
/* recorder/cold.h - big arrays, kept apart from the small state.
 *
 * A start-up costs what it touches: on a virtualised guest a page fault
 * costs ~40 us, more than the rest of libfdr's start together. The small
 * state start-up writes (flags, counters, locks, the registry's heads) is
 * a few KiB, but in .bss each file's variables sit in file order, between
 * arrays of up to 3.5 MiB that a short program never touches: that small
 * state spread over 20 pages, 20 faults. FDR__COLD puts an array in a
 * section of its own, which the library's link sorts after every file's
 * small state (--sort-section=name: ".bss" before ".bss.fdr_cold";
 * lib/recorder/CMakeLists.txt), so the small state packs into a few pages
 * and each big array costs only the pages it uses. Linked otherwise (a
 * user's link of libfdr.a), nothing changes but the layout. */
#ifndef FDR_RECORDER_COLD_H
#define FDR_RECORDER_COLD_H

#define FDR__COLD __attribute__((section(".bss.fdr_cold")))
/* The same for an object of which start-up touches the first few KiB
 * (fdr__cfg's head, the saved actions of the first signals): from a page
 * of its own, so that part never straddles two pages by chance of what
 * lies before it (each did once some variables before them grew: two
 * faults more at start). The alignment costs address space only. */
#define FDR__COLD_PAGE __attribute__((section(".bss.fdr_cold"), aligned(4096)))

#endif
