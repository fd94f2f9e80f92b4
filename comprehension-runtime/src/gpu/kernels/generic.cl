/* The generic kernels of flattening by expansion, independent of any comprehension's types:
 *
 * - scan: the exclusive prefix sum of a level's sizes (its segment offsets), in three phases
 *   (tile sums, a scan of the tile sums, every tile rescanned from its carry), faulting when the
 *   sizes sum to more than a u64 counts;
 * - load-balanced search: for every position of a chunk of a level's flattened children, its
 *   parent, found by merging the positions with the segment offsets along the merge path
 *   (moderngpu's load_balance_search): one search per work-item, a serial merge of a few items
 *   after it, and a million empty segments cost as much as a million positions, not a search
 *   each;
 * - compaction: the positions a filter kept, moved to the front in order;
 * - segments given by flags: each position's segment, and its index within it;
 * - iota and fill, for group columns.
 *
 * Compiled once per device. */

/* ---- scan ---------------------------------------------------------------------------------- */

/* a + b, or a fault when it does not fit a u64 (sizes are never negative, so a total that
 * overflows overflows in any order). */
PC_FN pc_u64 pc_add_sizes(pc_fault_t fault, pc_u64 a, pc_u64 b) {
  pc_u64 s = a + b;
  if (s < a) {
    pc_record_fault(fault, PC_FAULT_SIZE_OVERFLOW, 0u, 0, 0);
    return 0;
  }
  return s;
}

/* Phase 1: the sum of every tile of PC_TILE sizes. */
PC_KERNEL void pc_scan_tiles(pc_fault_t pc_fault, PC_GLOBAL const pc_u64 *in, pc_u64 n,
                             PC_GLOBAL pc_u64 *tile_sums) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 base = PC_GROUP_ID() * (pc_u64)PC_TILE;
  pc_u64 sum = 0;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 i = base + (pc_u64)k * PC_WG + t;
    if (i < n) sum = pc_add_sizes(pc_fault, sum, in[i]);
  }
  scratch[t] = sum;
  PC_BARRIER();
  for (pc_u32 s = PC_WG / 2; s > 0; s >>= 1) {
    if (t < s) scratch[t] = pc_add_sizes(pc_fault, scratch[t], scratch[t + s]);
    PC_BARRIER();
  }
  if (t == 0) tile_sums[PC_GROUP_ID()] = scratch[0];
}

/* Phase 2, one work-group: `sums[0..count]` replaced by their exclusive prefix sums, and the
 * total written to `sums[count]`. */
PC_KERNEL void pc_scan_carries(pc_fault_t pc_fault, PC_GLOBAL pc_u64 *sums, pc_u64 count) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 carry = 0;
  for (pc_u64 base = 0; base < count; base += PC_WG) {
    pc_u64 i = base + t;
    pc_u64 v = i < count ? sums[i] : 0;
    scratch[t] = v;
    PC_BARRIER();
    /* Hillis-Steele inclusive scan. */
    for (pc_u32 s = 1; s < PC_WG; s <<= 1) {
      pc_u64 add = t >= s ? scratch[t - s] : 0;
      PC_BARRIER();
      scratch[t] = pc_add_sizes(pc_fault, scratch[t], add);
      PC_BARRIER();
    }
    if (i < count) sums[i] = pc_add_sizes(pc_fault, carry, scratch[t] - v);
    carry = pc_add_sizes(pc_fault, carry, scratch[PC_WG - 1]);
    PC_BARRIER();
  }
  if (t == 0) sums[count] = carry;
}

/* Phase 3: every tile's exclusive prefix sums, from its carry; `out` has n + 1 entries, the
 * last the total. Work-item t scans PC_ITEMS consecutive sizes. */
PC_KERNEL void pc_scan_apply(pc_fault_t pc_fault, PC_GLOBAL const pc_u64 *in, pc_u64 n,
                             PC_GLOBAL const pc_u64 *carries, pc_u64 tiles,
                             PC_GLOBAL pc_u64 *out) {
  PC_LOCAL_ARRAY(pc_u64, scratch, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_u64 first = g * (pc_u64)PC_TILE + (pc_u64)t * PC_ITEMS;
  pc_u64 mine = 0;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) mine += in[first + k];
  }
  scratch[t] = mine;
  PC_BARRIER();
  for (pc_u32 s = 1; s < PC_WG; s <<= 1) {
    pc_u64 add = t >= s ? scratch[t - s] : 0;
    PC_BARRIER();
    scratch[t] += add;
    PC_BARRIER();
  }
  /* The total was checked for overflow in phases 1 and 2: every prefix fits. */
  pc_u64 running = carries[g] + scratch[t] - mine;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) {
      out[first + k] = running;
      running += in[first + k];
    }
  }
  if (g == 0 && t == 0) out[n] = carries[tiles];
}

/* ---- load-balanced search ------------------------------------------------------------------ */

#define PC_LBS_ITEMS 16u

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

/* ---- compaction ---------------------------------------------------------------------------- */

/* dst[positions[t]] = src[t] where flags[t]: one component array of a column, `bytes` wide. */
#define PC_DEF_COMPACT(bytes, type)                                                                \
  PC_KERNEL void pc_compact_##bytes(pc_u64 n, PC_GLOBAL const pc_u64 *flags,                      \
                                    PC_GLOBAL const pc_u64 *positions, PC_GLOBAL const pc_u8 *src, \
                                    pc_u64 src_offset, PC_GLOBAL pc_u8 *dst, pc_u64 dst_offset) {  \
    pc_u64 t = PC_GLOBAL_ID();                                                                      \
    if (t < n && flags[t])                                                                          \
      ((PC_GLOBAL type *)(dst + dst_offset))[positions[t]] =                                       \
          ((PC_GLOBAL const type *)(src + src_offset))[t];                                          \
  }

PC_DEF_COMPACT(1, pc_u8)
PC_DEF_COMPACT(2, pc_u16)
PC_DEF_COMPACT(4, pc_u32)
PC_DEF_COMPACT(8, pc_u64)

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
