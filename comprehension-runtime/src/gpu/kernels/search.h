/* Finding a position's parent, inside the kernel that needs it.
 *
 * A level's positions are its parents' children laid end to end: parent s holds positions
 * offsets[s] .. offsets[s + 1] (the exclusive scan of the sizes, n + 1 entries). A level
 * kernel's work-group first finds the parents of its tile's first and last positions (two
 * searches, by one work-item), then every work-item searches only between those two: a range
 * that is a handful of offsets when rows are long, read from cache, and never the whole
 * offsets array per position. Empty parents cost nothing (no work-item stands for them), a
 * single huge parent is shared by every work-group, and no parent id per position goes
 * through memory.
 *
 * A regular level (every parent has `fanout` children) needs no search: a division, in 32 bits
 * when the positions fit (a 64-bit division is several times slower on GPUs). */
#ifndef PC_SEARCH_H
#define PC_SEARCH_H

/* The segment holding position `j`: the last s below `segments` with offsets[s] <= j (an empty
 * segment shares its offset with the next, which is the one holding j). */
PC_FN pc_u64 pc_segment_of(PC_GLOBAL const pc_u64 *offsets, pc_u64 segments, pc_u64 j) {
  pc_u64 lo = 0, hi = segments;
  while (lo < hi) {
    pc_u64 mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= j) lo = mid + 1; else hi = mid;
  }
  return lo - 1;
}

/* The segments holding the first and the last of the chunk's positions first .. first + len
 * - 1 (clipped to the chunk's `count`; the chunk starts at position j0), into span[0] and
 * span[1]. Every work-item of the group calls it (it has barriers). A program's kernels take
 * one of two forms, by the device's kind (PC_CPU_SHAPES, defined after this file, where the
 * kernels call it):
 *
 * - on a CPU device, where a work-group's work-items run as a loop on one core, the first
 *   work-item makes both searches;
 * - on a GPU the work-group makes them, half its work-items for each position, each half
 *   probing PC_WG / 2 offsets side by side per round: ceil(log_128(segments)) rounds (two for
 *   a thousand segments, four for a hundred million) of one trip to memory each, where two
 *   binary searches by one work-item are 2 log2(segments) dependent trips while the group
 *   waits — which, for tiles of 256 positions, held a skewed expand on an H200 to 8 % of its
 *   bandwidth. */
#define pc_tile_span(offsets, segments, j0, count, first, len, span) \
  (PC_CPU_SHAPES ? pc_tile_span_serial(offsets, segments, j0, count, first, len, span) \
                 : pc_tile_span_wide(offsets, segments, j0, count, first, len, span))

PC_FN void pc_tile_span_serial(PC_GLOBAL const pc_u64 *offsets, pc_u64 segments, pc_u64 j0,
                               pc_u64 count, pc_u64 first, pc_u64 len, PC_LOCAL_PTR(pc_u64) span) {
  if (PC_LOCAL_ID() == 0u && first < count) {
    pc_u64 last = count - first > len ? first + len - 1 : count - 1;
    span[0] = pc_segment_of(offsets, segments, j0 + first);
    span[1] = pc_segment_of(offsets, segments, j0 + last);
  }
  PC_BARRIER();
}

/* Each round narrows the candidates lo .. lo + n - 1 (offsets[lo] <= j throughout; the answer
 * among them) to one of PC_WG / 2 slices of `step`: lane k probes the slice starting at
 * lo + k * step and the next one's start, and the one lane whose slice start is <= j and the
 * next's is not (past the candidates or the segments counts as not: the offsets rise) writes
 * its slice's start. Every round's `n` is the same in both halves, so every work-item passes
 * the same barriers. */
PC_FN void pc_tile_span_wide(PC_GLOBAL const pc_u64 *offsets, pc_u64 segments, pc_u64 j0,
                             pc_u64 count, pc_u64 first, pc_u64 len, PC_LOCAL_PTR(pc_u64) span) {
  const pc_u64 lanes = PC_WG / 2u;
  pc_u32 side = PC_LOCAL_ID() / (pc_u32)lanes;
  pc_u64 lane = PC_LOCAL_ID() % (pc_u32)lanes;
  pc_u64 last = first >= count ? first : count - first > len ? first + len - 1 : count - 1;
  pc_u64 j = j0 + (side == 0u ? first : last);
  pc_u64 lo = 0, n = segments;
  while (n > 1u) {
    pc_u64 step = (n + lanes - 1u) / lanes;
    pc_u64 at = lo + lane * step, next = at + step;
    /* Both loads unconditional (offsets has segments + 1 entries), so that they go together. */
    pc_u64 at_offset = offsets[at < segments ? at : segments];
    pc_u64 next_offset = offsets[next < segments ? next : segments];
    pc_bool here = lane * step < n && at < segments && at_offset <= j;
    pc_bool beyond = (lane + 1u) * step < n && next < segments && next_offset <= j;
    if (here && !beyond) span[side] = at;
    PC_BARRIER();
    lo = span[side];
    n = step;
    PC_BARRIER();
  }
  if (lane == 0u) span[side] = lo;
  PC_BARRIER();
}

/* The segment holding position `j`, known to be one of lo ..= hi. A fixed number of steps
 * for a given range, each a comparison turned into arithmetic (a compiler may still choose to
 * branch on it). */
PC_FN pc_u64 pc_segment_in(PC_GLOBAL const pc_u64 *offsets, pc_u64 lo, pc_u64 hi, pc_u64 j) {
  /* offsets[lo] <= j throughout, and the answer is one of lo .. lo + len - 1. */
  pc_u64 len = hi + 1 - lo;
  while (len > 1) {
    pc_u64 step = len / 2;
    lo += step * (pc_u64)(offsets[lo + step] <= j);
    len -= step;
  }
  return lo;
}

/* The most parents a tile spans for its work-items' first parents to come from a merge
 * (pc_first_parents) rather than a search each: the merge takes span / PC_WG steps per
 * work-item, neighbouring offsets read by neighbouring work-items, a search about log2(span)
 * dependent reads at scattered places. At 4 × PC_WG the sparse matrix × vector's tiles on a
 * CPU device (256 × 128 positions, rows of 10 on average: some 3,400 parents) took a search
 * each, 13 % of its level kernel's time; at 16 × PC_WG they merge, and the device run took
 * 7-8 % less. */
#define PC_MERGE_SPAN (16u * PC_WG)

/* firsts[t] = the parent of the position first + t * items (work-item t's first in a level
 * that gives each work-item `items` positions), for every work-item t whose
 * position lies in the tile, by a merge of those positions with the offsets of the tile's
 * parents span[0] ..= span[1] (work-item w takes parents span[0] + w, + PC_WG, ...): no search
 * per work-item. For a span of under PC_MERGE_SPAN parents; every work-item of the group calls
 * it (it has a barrier). */
PC_FN void pc_first_parents(PC_GLOBAL const pc_u64 *offsets, PC_LOCAL_PTR(pc_u64) span,
                            pc_u64 first, pc_u32 items, PC_LOCAL_PTR(pc_u64) firsts) {
  for (pc_u64 s = span[0] + PC_LOCAL_ID(); s <= span[1]; s += PC_WG) {
    /* The work-items whose first position is one of s's, offsets[s] ..< offsets[s + 1] (past
     * `first`: the span's first parent may begin before the tile). */
    pc_u64 lo = offsets[s] > first ? offsets[s] - first : 0;
    pc_u64 hi = offsets[s + 1] - first;
    pc_u64 k = (lo + items - 1u) / items;
    pc_u64 end = (hi + items - 1u) / items;
    for (; k < end && k < PC_WG; k++) firsts[k] = s;
  }
  PC_BARRIER();
}

/* Position j's parent in a regular level of `fanout` children each: j / fanout, in 32 bits
 * when both fit. */
PC_FN pc_u64 pc_parent_of_regular(pc_u64 j, pc_u64 d) {
  if ((j | d) >> 32 == 0) return (pc_u64)((pc_u32)j / (pc_u32)d);
  return j / d;
}

/* ---- keeping what a filter passes ----------------------------------------------------------
 *
 * A level with a filter writes only the positions it keeps, packed in order, without a flag or
 * a place per position in memory: its kernel runs twice. Phase 0 counts each work-group's kept
 * positions (one count per group); the host's scan of the counts gives each group its first
 * place; phase 1 writes each kept position at its group's place plus its rank among the group's
 * kept positions.
 *
 * A work-group that keeps at most `limit` of its positions (the kernel's pc_staging_limit, the
 * same for every group of a launch) also writes its kept values in phase 0, packed, in its own
 * region of the staging buffer (group g's at g * limit ...); in phase 1 it reads its count back
 * as its place's distance to the next group's and only copies them, neighbouring work-items
 * moving neighbouring values, without computing a position again. A group that keeps more
 * computes its positions again in phase 1 and writes them then. The host sets the limit from
 * what each moves (executor.rs): staging writes the kept values twice and reads them once more,
 * computing again reads the group's inputs again; so a group stages when that costs no more
 * memory traffic, and never more than half its positions. A group that keeps nothing computes
 * nothing in phase 1 whatever the limit: the filters that keep almost nothing (the Pythagorean
 * triples) no longer do their arithmetic twice. */

/* Local memory for pc_group_scan_u32: the work-items' values, the runs' totals, the group's. */
#define PC_SCAN_SCRATCH (PC_WG + PC_RUNS + 1u)

/* The total of the work-group scan (pc_group_scan_u32, pc_tile_rank) that used `scratch`, until
 * the caller's next barrier. */
#define PC_SCAN_TOTAL(scratch) ((scratch)[PC_WG + PC_RUNS])

/* The work-group's exclusive prefix sum of `value` (work-item order), by runs (PC_RUN): each
 * run's prefix serially in place, the runs' totals after the group's entries, scanned by one
 * work-item; the group's total at scratch[PC_WG + PC_RUNS]. `scratch` holds PC_SCAN_SCRATCH
 * values and may be written again after the caller's next barrier. Every work-item of the
 * group calls it (it has barriers). (generic.cl's pc_group_scan is the u64 one, with the
 * sizes' overflow checks.) */
PC_FN pc_u32 pc_group_scan_u32(pc_u32 value, PC_LOCAL_PTR(pc_u32) scratch) {
  pc_u32 t = PC_LOCAL_ID();
  scratch[t] = value;
  PC_BARRIER();
  if (t < PC_RUNS) {
    pc_u32 sum = 0;
    for (pc_u32 k = t * PC_RUN; k < (t + 1u) * PC_RUN; k++) {
      pc_u32 n = scratch[k];
      scratch[k] = sum;
      sum += n;
    }
    scratch[PC_WG + t] = sum;
  }
  PC_BARRIER();
  if (t == 0u) {
    pc_u32 sum = 0;
    for (pc_u32 r = 0; r < PC_RUNS; r++) {
      pc_u32 n = scratch[PC_WG + r];
      scratch[PC_WG + r] = sum;
      sum += n;
    }
    scratch[PC_WG + PC_RUNS] = sum;
  }
  PC_BARRIER();
  return scratch[PC_WG + t / PC_RUN] + scratch[t];
}

/* The number of work-items before this one in its work-group whose `pass` is set; their
 * number in all is PC_SCAN_TOTAL(scratch) until the caller's next barrier. Every work-item of
 * the group calls it (it has barriers); `scratch` holds PC_SCAN_SCRATCH values. */
PC_FN pc_u32 pc_tile_rank(pc_bool pass, PC_LOCAL_PTR(pc_u32) scratch) {
#ifdef PC_CUDA
  /* A warp's ranks from its vote, the warps' totals scanned by one thread. */
  pc_u32 t = PC_LOCAL_ID();
  pc_u32 lane = t % 32u, warp = t / 32u;
  pc_u32 votes = __ballot_sync(0xffffffffu, pass != 0);
  pc_u32 before = (pc_u32)__popc(votes & ((1u << lane) - 1u));
  if (lane == 0u) scratch[PC_WG + warp] = (pc_u32)__popc(votes);
  PC_BARRIER();
  if (t == 0u) {
    pc_u32 sum = 0;
    for (pc_u32 w = 0; w < PC_WG / 32u; w++) {
      pc_u32 n = scratch[PC_WG + w];
      scratch[PC_WG + w] = sum;
      sum += n;
    }
    scratch[PC_WG + PC_RUNS] = sum; /* PC_SCAN_TOTAL: the warps' entries are PC_RUNS */
  }
  PC_BARRIER();
  return scratch[PC_WG + warp] + before;
#else
  return pc_group_scan_u32(pass ? 1u : 0u, scratch);
#endif
}

#endif
