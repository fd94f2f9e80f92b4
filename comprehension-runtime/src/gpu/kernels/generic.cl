/* The generic kernels of flattening by expansion, independent of any comprehension's types:
 *
 * - scan: the exclusive prefix sum of a level's sizes (its segment offsets), in three phases
 *   (tile sums, a scan of the tile sums, every tile rescanned from its carry), faulting when the
 *   sizes sum to more than a u64 counts; its second phase alone also turns a filtering level's
 *   per-work-group kept counts into each group's first place (search.h), and a level's few
 *   sizes into their offsets in place; when the tiles are few, the second and third in one;
 * - load-balanced search, for the segmented API (`parcomp::segmented`; a comprehension's level
 *   kernels find their parents themselves, search.h): for every position of a chunk, its
 *   segment, found by merging the positions with the segment offsets along the merge path
 *   (moderngpu's load_balance_search): one search per work-item, a serial merge of a few items
 *   after it;
 * - segments given by flags: each position's segment, and its index within it;
 * - iota and fill, for group columns.
 *
 * Compiled once per device. */

/* ---- scan ---------------------------------------------------------------------------------- */

/* a + b, or a fault when it does not fit a u64 (sizes are never negative, so a total that
 * overflows overflows in any order). */
PC_FN pc_u64 pc_add_sizes(pc_fault_t fault, pc_u64 a, pc_u64 b) {
  pc_u64 s = a + b;
  if (PC_UNLIKELY(s < a)) {
    pc_record_fault(fault, PC_FAULT_SIZE_OVERFLOW, 0u, 0, 0);
    return 0;
  }
  return s;
}

/* The work-group's exclusive prefix sum of `value` (work-item order), by runs (PC_RUN): each
 * run's prefix serially in place, the runs' totals after the group's, scanned by one
 * work-item. Returns the work-item's exclusive prefix and sets *total to the group's sum.
 * `scratch` holds PC_SCAN_SCRATCH values; every work-item calls it (it has barriers). */
PC_FN pc_u64 pc_group_scan(pc_fault_t fault, PC_LOCAL_PTR(pc_u64) scratch, pc_u64 value,
                           pc_u64 *total) {
  pc_u32 t = PC_LOCAL_ID();
  scratch[t] = value;
  PC_BARRIER();
  if (t < PC_RUNS) {
    pc_u64 sum = 0;
    for (pc_u32 k = t * PC_RUN; k < (t + 1u) * PC_RUN; k++) {
      pc_u64 n = scratch[k];
      scratch[k] = sum;
      sum = pc_add_sizes(fault, sum, n);
    }
    scratch[PC_WG + t] = sum;
  }
  PC_BARRIER();
  if (t == 0u) {
    pc_u64 sum = 0;
    for (pc_u32 r = 0; r < PC_RUNS; r++) {
      pc_u64 n = scratch[PC_WG + r];
      scratch[PC_WG + r] = sum;
      sum = pc_add_sizes(fault, sum, n);
    }
    /* The total, where every work-item reads it: past the runs' prefixes. */
    scratch[PC_WG + PC_RUNS] = sum;
  }
  PC_BARRIER();
  pc_u64 prefix = scratch[PC_WG + t / PC_RUN] + scratch[t];
  *total = scratch[PC_WG + PC_RUNS];
  /* Every work-item has read before the scratch is written again by a later call. */
  PC_BARRIER();
  return prefix;
}

/* Phase 1: the sum of every tile of PC_TILE sizes (work-item t the PC_ITEMS consecutive sizes
 * from t * PC_ITEMS). */
PC_KERNEL void pc_scan_tiles(pc_fault_t pc_fault, PC_GLOBAL const pc_u64 *PC_RESTRICT in,
                             pc_u64 n, PC_GLOBAL pc_u64 *PC_RESTRICT tile_sums) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_SCAN_SCRATCH);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 first = PC_GROUP_ID() * (pc_u64)PC_TILE + (pc_u64)t * PC_ITEMS;
  pc_u64 sum = 0;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) sum = pc_add_sizes(pc_fault, sum, in[first + k]);
  }
  pc_u64 total;
  (void)pc_group_scan(pc_fault, scratch, sum, &total);
  if (t == 0) tile_sums[PC_GROUP_ID()] = total;
}

/* Phase 2, one work-group: `sums[0..count]` replaced by their exclusive prefix sums from
 * `carry`, and the total (from `carry`) written to `sums[count]`; work-item t takes PC_ITEMS
 * consecutive sums of each block of PC_TILE. */
PC_FN pc_u64 pc_scan_sums(pc_fault_t pc_fault, PC_LOCAL_PTR(pc_u64) scratch, PC_GLOBAL pc_u64 *sums,
                          pc_u64 count, pc_u64 carry) {
  pc_u32 t = PC_LOCAL_ID();
  for (pc_u64 base = 0; base < count; base += PC_TILE) {
    pc_u64 first = base + (pc_u64)t * PC_ITEMS;
    pc_u64 mine = 0;
    for (pc_u32 k = 0; k < PC_ITEMS; k++) {
      if (first + k < count) mine = pc_add_sizes(pc_fault, mine, sums[first + k]);
    }
    pc_u64 block;
    pc_u64 running = pc_add_sizes(pc_fault, carry, pc_group_scan(pc_fault, scratch, mine, &block));
    for (pc_u32 k = 0; k < PC_ITEMS; k++) {
      if (first + k < count) {
        pc_u64 n = sums[first + k];
        sums[first + k] = running;
        running += n; /* within the block's total, checked above */
      }
    }
    carry = pc_add_sizes(pc_fault, carry, block);
  }
  if (t == 0) sums[count] = carry;
  return carry;
}

PC_KERNEL void pc_scan_carries(pc_fault_t pc_fault, PC_GLOBAL pc_u64 *sums, pc_u64 count) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_SCAN_SCRATCH);
  (void)pc_scan_sums(pc_fault, scratch, sums, count, 0);
}

/* A CPU device's scan of a level's sizes, up to tens of thousands of them, in place: work-item
 * 0 adds them in order, `sums[count]` the total. One launch without a barrier, where the tiled
 * form takes one or two launches of work-groups that PoCL runs as loops over their 256
 * work-items between barriers (the Pythagorean triples' 2 × 10⁴ sizes at n = 200: 76 µs in two
 * launches). */
PC_KERNEL void pc_scan_serial(pc_fault_t pc_fault, PC_GLOBAL pc_u64 *sums, pc_u64 count) {
  if (PC_GLOBAL_ID() != 0) return;
  pc_u64 sum = 0;
  for (pc_u64 k = 0; k < count; k++) {
    pc_u64 n = sums[k];
    sums[k] = sum;
    sum = pc_add_sizes(pc_fault, sum, n);
  }
  sums[count] = sum;
}

/* The same, from the running total `base[0]` of the chunks before, which it then advances: a
 * filtering level's places in a run's output region that several chunks append to, with no
 * wait for each chunk's kept count. Every work-item reads `base[0]` before the barrier after
 * which work-item 0 writes it. */
PC_KERNEL void pc_scan_carries_from(pc_fault_t pc_fault, PC_GLOBAL pc_u64 *sums, pc_u64 count,
                                    PC_GLOBAL pc_u64 *base) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_SCAN_SCRATCH);
  pc_u64 total = pc_scan_sums(pc_fault, scratch, sums, count, base[0]);
  PC_BARRIER();
  if (PC_LOCAL_ID() == 0) base[0] = total;
}

/* Phase 3: every tile's exclusive prefix sums, from its carry; `out` has n + 1 entries, the
 * last the total. Work-item t scans PC_ITEMS consecutive sizes. */
PC_KERNEL void pc_scan_apply(pc_fault_t pc_fault, PC_GLOBAL const pc_u64 *PC_RESTRICT in,
                             pc_u64 n, PC_GLOBAL const pc_u64 *PC_RESTRICT carries, pc_u64 tiles,
                             PC_GLOBAL pc_u64 *PC_RESTRICT out) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_SCAN_SCRATCH);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_u64 first = g * (pc_u64)PC_TILE + (pc_u64)t * PC_ITEMS;
  pc_u64 mine = 0;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) mine += in[first + k];
  }
  pc_u64 tile;
  /* The total was checked for overflow in phases 1 and 2: every prefix fits. */
  pc_u64 running = carries[g] + pc_group_scan(pc_fault, scratch, mine, &tile);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) {
      out[first + k] = running;
      running += in[first + k];
    }
  }
  if (g == 0 && t == 0) out[n] = carries[tiles];
}

/* Phases 2 and 3 in one, when the tile sums are few (at most PC_TILE of them): every tile's
 * exclusive prefix sums as pc_scan_apply's, each work-group summing the tile sums before its
 * own for its carry (work-item t those from t * PC_ITEMS of each block of PC_TILE), and the last
 * one writing the total to out[n] — faulting when it overflows, which any partial sum's
 * overflowing implies (sizes are never negative). Work-group g reads g tile sums, from the
 * cache for the most part: PC_TILE of them at most, PC_ITEMS per work-item. */
PC_KERNEL void pc_scan_apply_summed(pc_fault_t pc_fault, PC_GLOBAL const pc_u64 *PC_RESTRICT in,
                                    pc_u64 n, PC_GLOBAL const pc_u64 *PC_RESTRICT tile_sums,
                                    pc_u64 tiles, PC_GLOBAL pc_u64 *PC_RESTRICT out) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_SCAN_SCRATCH);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_u64 before = 0;
  for (pc_u64 k = (pc_u64)t * PC_ITEMS; k < g; k += PC_TILE) {
    for (pc_u32 m = 0; m < PC_ITEMS && k + m < g; m++) {
      before = pc_add_sizes(pc_fault, before, tile_sums[k + m]);
    }
  }
  pc_u64 carry;
  (void)pc_group_scan(pc_fault, scratch, before, &carry);
  pc_u64 first = g * (pc_u64)PC_TILE + (pc_u64)t * PC_ITEMS;
  pc_u64 mine = 0;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) mine += in[first + k];
  }
  pc_u64 tile;
  /* Phase 1 checked every tile's sum; the carries are checked above, and the last tile's carry
   * plus its sum (the total) below: every prefix fits when the total does. */
  pc_u64 running = carry + pc_group_scan(pc_fault, scratch, mine, &tile);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) {
      out[first + k] = running;
      running += in[first + k];
    }
  }
  if (g + 1u == tiles && t == 0) out[n] = pc_add_sizes(pc_fault, carry, tile);
}

/* ---- load-balanced search ------------------------------------------------------------------ */

#define PC_LBS_ITEMS 16u

/* The segments holding the first and the last position of a chunk: bounds[0], bounds[1]. */
PC_KERNEL void pc_lbs_bounds(PC_GLOBAL const pc_u64 *offsets, pc_u64 segments, pc_u64 j0,
                             pc_u64 count, PC_GLOBAL pc_u64 *bounds) {
  if (PC_GLOBAL_ID() != 0) return;
  bounds[0] = pc_segment_of(offsets, segments, j0);
  bounds[1] = pc_segment_of(offsets, segments, j0 + count - 1);
}

/* The split of the merge path at `diag`: how many positions (A) come before it, when A is
 * positions j0, j0 + 1, ... and B the starts of segments s_first + 1 ... s_last, a segment's
 * start going before the position equal to it. */
PC_FN pc_u64 pc_lbs_path(PC_GLOBAL const pc_u64 *offsets, pc_u64 s_first, pc_u64 j0, pc_u64 na,
                         pc_u64 nb, pc_u64 diag) {
  pc_u64 begin = diag > nb ? diag - nb : 0;
  pc_u64 end = diag < na ? diag : na;
  while (begin < end) {
    pc_u64 mid = begin + (end - begin) / 2;
    if (j0 + mid < offsets[s_first + 1 + (diag - 1 - mid)]) begin = mid + 1; else end = mid;
  }
  return begin;
}

/* seg[a] = the segment of position j0 + a, for a in 0..count. Work-item w merges items
 * w * PC_LBS_ITEMS ... of the merge path. */
PC_KERNEL void pc_lbs(PC_GLOBAL const pc_u64 *offsets, PC_GLOBAL const pc_u64 *bounds, pc_u64 j0,
                      pc_u64 count, PC_GLOBAL pc_u64 *seg) {
  pc_u64 s_first = bounds[0];
  pc_u64 nb = bounds[1] - s_first;
  pc_u64 na = count;
  pc_u64 total = na + nb;
  pc_u64 diag = PC_GLOBAL_ID() * PC_LBS_ITEMS;
  if (diag >= total) return;
  pc_u64 a = pc_lbs_path(offsets, s_first, j0, na, nb, diag);
  pc_u64 b = diag - a;
  for (pc_u32 k = 0; k < PC_LBS_ITEMS && a + b < total; k++) {
    int take_b = b < nb && (a >= na || !(j0 + a < offsets[s_first + 1 + b]));
    if (take_b) {
      b++;
    } else {
      seg[a] = s_first + b;
      a++;
    }
  }
}

/* ---- segments given by flags (the parcomp::segmented API) ----------------------------------- */

/* starts[i] = 1 where a segment starts: flags[i], and always at 0 (as Futhark's segments). */
PC_KERNEL void pc_flag_starts(PC_GLOBAL const pc_u8 *flags, pc_u64 n, PC_GLOBAL pc_u64 *starts) {
  pc_u64 t = PC_GLOBAL_ID();
  if (t < n) starts[t] = (t == 0 || flags[t] != 0) ? 1u : 0u;
}

/* groups[i] = the segment of position i, from the exclusive scan of the starts (n + 1
 * entries): the number of starts up to and including i, less one. */
PC_KERNEL void pc_groups_of(PC_GLOBAL const pc_u64 *offsets, pc_u64 n, PC_GLOBAL pc_u64 *groups) {
  pc_u64 t = PC_GLOBAL_ID();
  if (t < n) groups[t] = offsets[t + 1] - 1u;
}

/* first[g] = the first position of segment g. */
PC_KERNEL void pc_segment_firsts(PC_GLOBAL const pc_u64 *starts, PC_GLOBAL const pc_u64 *groups,
                                 pc_u64 n, PC_GLOBAL pc_u64 *first) {
  pc_u64 t = PC_GLOBAL_ID();
  if (t < n && starts[t] != 0) first[groups[t]] = t;
}

/* out[i] = i less the first position of its segment. */
PC_KERNEL void pc_index_in_segment(PC_GLOBAL const pc_u64 *groups, PC_GLOBAL const pc_u64 *first,
                                   pc_u64 n, PC_GLOBAL pc_u64 *out) {
  pc_u64 t = PC_GLOBAL_ID();
  if (t < n) out[t] = t - first[groups[t]];
}

/* ---- iota and fill ------------------------------------------------------------------------- */

PC_KERNEL void pc_iota(PC_GLOBAL pc_u64 *out, pc_u64 n) {
  pc_u64 t = PC_GLOBAL_ID();
  if (t < n) out[t] = t;
}

PC_KERNEL void pc_fill_u64(PC_GLOBAL pc_u64 *out, pc_u64 n, pc_u64 value) {
  pc_u64 t = PC_GLOBAL_ID();
  if (t < n) out[t] = value;
}
