/* A stable LSD radix sort of u64 keys carrying a u64 payload (parcomp::segmented's
 * sort_permutation, whose payload is every key's original index).
 *
 * One pass per 8-bit digit, from the least significant; the host skips the digits that are the
 * same in every key. Each pass runs over tiles of PC_TILE keys:
 *
 * - pc_sort_count: every tile's count of each digit (atomic increments in local memory; it needs
 *   no sorted tile), into hist[digit * tiles + tile] (digit-major,
 *   so that the exclusive scan of hist, done by the generic scan kernels, gives the place of the
 *   first key of each digit of each tile in the output);
 * - pc_sort_scatter: the tile's digits sorted stably in local memory (pc_sort_tile: two stable
 *   passes over the digit's two nibbles, each by a rank table), then every key and its payload
 *   moved to that place plus its rank among the keys of the same digit before it in its tile —
 *   its place in the sorted tile less the place of the digit's first key there. Neighbouring
 *   work-items write neighbouring places.
 *
 * Keys of equal digits keep their order (every pass of the local sort is stable), which makes
 * every pass stable, and so the sort. Everything is unsigned; shift amounts are masked below 64
 * (see scalar.h). */

#define PC_SORT_BITS 8u
#define PC_SORT_RADIX 256u /* 1 << PC_SORT_BITS */
/* The local sort's passes go by nibbles. */
#define PC_SORT_NIBBLES 16u

/* The digit of `key` at bit `shift`. */
PC_FN pc_u32 pc_sort_digit(pc_u64 key, pc_u32 shift) {
  return (pc_u32)(key >> (shift & 63u)) & (PC_SORT_RADIX - 1u);
}

/* One stable pass of a tile's local sort, by the nibble at `nshift` (0 or 4) of the digits:
 * (digits_in, index_in) moved to (digits_out, index_out) in that order. Work-item t takes the
 * PC_ITEMS consecutive entries from t * PC_ITEMS and counts them by nibble into its column of a
 * [nibble][work-item] table; the table scanned as one array in that row-major order gives entry
 * [b][t] the number of entries placed before work-item t's entries of nibble b. Every work-item
 * of the group calls it (it has barriers). */
PC_FN void pc_sort_nibble(PC_LOCAL_PTR(pc_u32) digits_in, PC_LOCAL_PTR(pc_u32) index_in,
                          PC_LOCAL_PTR(pc_u32) digits_out, PC_LOCAL_PTR(pc_u32) index_out,
                          pc_u32 nshift, PC_LOCAL_PTR(pc_u32) table, PC_LOCAL_PTR(pc_u32) sums) {
  pc_u32 t = PC_LOCAL_ID();
  pc_u32 first = t * PC_ITEMS;
  for (pc_u32 b = 0; b < PC_SORT_NIBBLES; b++) table[b * PC_WG + t] = 0;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    table[((digits_in[first + k] >> nshift) & (PC_SORT_NIBBLES - 1u)) * PC_WG + t] += 1u;
  }
  PC_BARRIER();
  /* The table's exclusive scan as one array: work-item t scans the PC_SORT_NIBBLES entries
   * from t * PC_SORT_NIBBLES, from the scan of the work-items' sums by runs of PC_RUN. */
  pc_u32 base = t * PC_SORT_NIBBLES;
  pc_u32 mine = 0;
  for (pc_u32 j = 0; j < PC_SORT_NIBBLES; j++) mine += table[base + j];
  pc_u32 running = pc_group_scan_u32(mine, sums);
  for (pc_u32 j = 0; j < PC_SORT_NIBBLES; j++) {
    pc_u32 count = table[base + j];
    table[base + j] = running;
    running += count;
  }
  PC_BARRIER();
  /* Each entry to its place: work-item t's next place for its nibble, in its own column. */
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u32 d = digits_in[first + k];
    pc_u32 cell = ((d >> nshift) & (PC_SORT_NIBBLES - 1u)) * PC_WG + t;
    pc_u32 at = table[cell];
    table[cell] = at + 1u;
    digits_out[at] = d;
    index_out[at] = index_in[first + k];
  }
  PC_BARRIER();
}

/* The tile of the `m` keys from `base` sorted stably by their digit at `shift`, in local
 * memory: afterwards digits[p] is the digit of the tile's p-th key in that order and index[p]
 * its place in the tile; digit d's keys are places first[d] .. end[d] (both 0 when it has
 * none). The places from m on hold no key (digit 255, sorted last). `digits`, `index`, `spare`
 * and `spare_index` hold PC_TILE entries, `table` PC_SORT_NIBBLES * PC_WG, `sums`
 * PC_SCAN_SCRATCH, `first` and `end` PC_SORT_RADIX. Every work-item of the group calls it. */
PC_FN void pc_sort_tile(PC_GLOBAL const pc_u64 *keys, pc_u64 base, pc_u32 m, pc_u32 shift,
                        PC_LOCAL_PTR(pc_u32) digits, PC_LOCAL_PTR(pc_u32) index,
                        PC_LOCAL_PTR(pc_u32) spare, PC_LOCAL_PTR(pc_u32) spare_index,
                        PC_LOCAL_PTR(pc_u32) table, PC_LOCAL_PTR(pc_u32) sums,
                        PC_LOCAL_PTR(pc_u32) first, PC_LOCAL_PTR(pc_u32) end) {
  pc_u32 t = PC_LOCAL_ID();
  /* The keys read striped: neighbouring work-items read neighbouring keys. */
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u32 i = k * PC_WG + t;
    digits[i] = i < m ? pc_sort_digit(keys[base + i], shift) : PC_SORT_RADIX - 1u;
    index[i] = i;
  }
  for (pc_u32 d = t; d < PC_SORT_RADIX; d += PC_WG) {
    first[d] = 0;
    end[d] = 0;
  }
  PC_BARRIER();
  pc_sort_nibble(digits, index, spare, spare_index, 0u, table, sums);
  pc_sort_nibble(spare, spare_index, digits, index, 4u, table, sums);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u32 p = k * PC_WG + t;
    if (p < m) {
      pc_u32 d = digits[p];
      if (p == 0u || digits[p - 1u] != d) first[d] = p;
      if (p + 1u == m || digits[p + 1u] != d) end[d] = p + 1u;
    }
  }
  PC_BARRIER();
}

/* The local arrays of pc_sort_tile, declared by each kernel. */
#define PC_SORT_LOCALS                                        \
  PC_LOCAL_ARRAY(pc_u32, digits, PC_TILE);                    \
  PC_LOCAL_ARRAY(pc_u32, index, PC_TILE);                     \
  PC_LOCAL_ARRAY(pc_u32, spare, PC_TILE);                     \
  PC_LOCAL_ARRAY(pc_u32, spare_index, PC_TILE);               \
  PC_LOCAL_ARRAY(pc_u32, table, PC_SORT_NIBBLES * PC_WG);     \
  PC_LOCAL_ARRAY(pc_u32, sums, PC_SCAN_SCRATCH);                 \
  PC_LOCAL_ARRAY(pc_u32, first, PC_SORT_RADIX);               \
  PC_LOCAL_ARRAY(pc_u32, end, PC_SORT_RADIX)

/* hist[d * tiles + g] = the number of keys of tile g whose digit at `shift` is d: counted with
 * atomic increments in local memory (the order of the counting does not matter), the keys read
 * striped. */
PC_KERNEL void pc_sort_count(PC_GLOBAL const pc_u64 *PC_RESTRICT keys, pc_u64 n, pc_u32 shift,
                             pc_u64 tiles, PC_GLOBAL pc_u64 *PC_RESTRICT hist) {
  PC_LOCAL_ARRAY(pc_u32, counts, PC_SORT_RADIX);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_u64 base = g * (pc_u64)PC_TILE;
  for (pc_u32 d = t; d < PC_SORT_RADIX; d += PC_WG) counts[d] = 0;
  PC_BARRIER();
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 i = base + k * PC_WG + t;
    if (i < n) PC_LOCAL_INC_U32(&counts[pc_sort_digit(keys[i], shift)]);
  }
  PC_BARRIER();
  for (pc_u32 d = t; d < PC_SORT_RADIX; d += PC_WG) hist[(pc_u64)d * tiles + g] = counts[d];
}

/* One pass's stable scatter: the key at place p of the sorted tile g (and its payload) goes to
 * offsets[d * tiles + g] + p - first[d], where d is its digit and `offsets` the exclusive scan
 * of pc_sort_count's histogram. A place outside the n keys (which cannot happen unless the
 * counts disagree) records a fault instead of writing there. */
PC_KERNEL void pc_sort_scatter(pc_fault_t pc_fault, PC_GLOBAL const pc_u64 *PC_RESTRICT keys,
                               PC_GLOBAL const pc_u64 *PC_RESTRICT vals, pc_u64 n, pc_u32 shift,
                               pc_u64 tiles, PC_GLOBAL const pc_u64 *PC_RESTRICT offsets,
                               PC_GLOBAL pc_u64 *PC_RESTRICT keys_out,
                               PC_GLOBAL pc_u64 *PC_RESTRICT vals_out) {
  PC_SORT_LOCALS;
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_u64 base = g * (pc_u64)PC_TILE;
  pc_u32 m = (pc_u32)(n - base < PC_TILE ? n - base : PC_TILE);
  pc_sort_tile(keys, base, m, shift, digits, index, spare, spare_index, table, sums, first, end);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u32 p = k * PC_WG + t;
    if (p >= m) break;
    pc_u32 d = digits[p];
    pc_u64 at = offsets[(pc_u64)d * tiles + g] + (p - first[d]);
    if (PC_UNLIKELY(at >= n)) {
      pc_record_fault(pc_fault, PC_FAULT_SIZE_CHANGED, 0u, at, n);
      return;
    }
    pc_u64 i = base + index[p];
    keys_out[at] = keys[i];
    vals_out[at] = vals[i];
  }
}
