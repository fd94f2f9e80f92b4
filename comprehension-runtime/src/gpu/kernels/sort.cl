/* A stable LSD radix sort of u64 keys carrying a u64 payload (parcomp::segmented's
 * sort_permutation, whose payload is every key's original index).
 *
 * One pass per digit of PC_SORT_BITS bits, from the least significant; the host skips the digits
 * that are the same in every key. Each pass runs over tiles of PC_TILE keys, work-item t of a
 * work-group holding the PC_ITEMS consecutive keys t * PC_ITEMS ... of its tile:
 *
 * - pc_sort_count: every tile's count of each digit, into hist[digit * tiles + tile] (digit-major,
 *   so that the exclusive scan of hist, done by the generic scan kernels, gives the place of the
 *   first key of each digit of each tile in the output);
 * - pc_sort_scatter: every key and its payload moved to that place plus its rank among the keys
 *   of the same digit before it in its tile.
 *
 * Both build the same rank table in local memory (pc_sort_table): each work-item counts its keys
 * by digit into its column of a [digit][work-item] table, and the table is scanned as one array
 * in that row-major order, so that entry [d][t] is the number of keys of the tile ordered before
 * the digit-d keys of work-item t when the tile is sorted stably by digit. Keys of equal digits
 * keep their order (the scan follows the work-items' order, and a work-item its keys' order),
 * which makes every pass stable, and so the sort.
 *
 * Everything is unsigned; shift amounts are masked below 64 (see scalar.h). */

#define PC_SORT_BITS 4u
#define PC_SORT_RADIX 16u /* 1 << PC_SORT_BITS */

/* The digit of `key` at bit `shift`. */
PC_FN pc_u32 pc_sort_digit(pc_u64 key, pc_u32 shift) {
  return (pc_u32)(key >> (shift & 63u)) & (PC_SORT_RADIX - 1u);
}

/* Fills `table` (PC_SORT_RADIX * PC_WG entries): table[d * PC_WG + t] = the number of keys of the
 * tile that come before work-item t's keys of digit d in the tile sorted stably by digit; and
 * sums[PC_WG - 1] = the number of keys in the tile. Work-item t's keys are those at
 * first, first + 1, ... below n, at most PC_ITEMS. Every work-item of the group must call it. */
PC_FN void pc_sort_table(PC_GLOBAL const pc_u64 *keys, pc_u64 n, pc_u32 shift, pc_u64 first,
                         PC_LOCAL_PTR(pc_u32) table, PC_LOCAL_PTR(pc_u32) sums) {
  pc_u32 t = PC_LOCAL_ID();
  /* Work-item t's counts, in its own column. */
  for (pc_u32 d = 0; d < PC_SORT_RADIX; d++) table[d * PC_WG + t] = 0;
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    if (first + k < n) table[pc_sort_digit(keys[first + k], shift) * PC_WG + t] += 1u;
  }
  PC_BARRIER();
  /* The exclusive scan of the table as one array: work-item t scans the PC_SORT_RADIX entries
   * from t * PC_SORT_RADIX, with the sum of the entries before them from a scan of the
   * work-items' sums. */
  pc_u32 base = t * PC_SORT_RADIX;
  pc_u32 mine = 0;
  for (pc_u32 j = 0; j < PC_SORT_RADIX; j++) mine += table[base + j];
  sums[t] = mine;
  PC_BARRIER();
  /* Hillis-Steele inclusive scan of the sums. */
  for (pc_u32 s = 1; s < PC_WG; s <<= 1) {
    pc_u32 add = t >= s ? sums[t - s] : 0u;
    PC_BARRIER();
    sums[t] += add;
    PC_BARRIER();
  }
  pc_u32 running = sums[t] - mine;
  for (pc_u32 j = 0; j < PC_SORT_RADIX; j++) {
    pc_u32 count = table[base + j];
    table[base + j] = running;
    running += count;
  }
  PC_BARRIER();
}

/* hist[d * tiles + g] = the number of keys of tile g whose digit at `shift` is d. */
PC_KERNEL void pc_sort_count(PC_GLOBAL const pc_u64 *keys, pc_u64 n, pc_u32 shift, pc_u64 tiles,
                             PC_GLOBAL pc_u64 *hist) {
  PC_LOCAL_ARRAY(pc_u32, table, PC_SORT_RADIX * PC_WG);
  PC_LOCAL_ARRAY(pc_u32, sums, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_sort_table(keys, n, shift, g * (pc_u64)PC_TILE + (pc_u64)t * PC_ITEMS, table, sums);
  if (t < PC_SORT_RADIX) {
    /* Digit t's keys lie between its first entry and the next digit's (or the tile's end). */
    pc_u32 end = t + 1u < PC_SORT_RADIX ? table[(t + 1u) * PC_WG] : sums[PC_WG - 1];
    hist[(pc_u64)t * tiles + g] = (pc_u64)(end - table[t * PC_WG]);
  }
}

/* One pass's stable scatter: the key at i (and its payload) goes to
 * offsets[d * tiles + g] + (the keys of digit d before it in its tile g), where d is its digit
 * and `offsets` the exclusive scan of pc_sort_count's histogram. A place outside the n keys
 * (which cannot happen unless the counts disagree) records a fault instead of writing there. */
PC_KERNEL void pc_sort_scatter(pc_fault_t pc_fault, PC_GLOBAL const pc_u64 *keys,
                               PC_GLOBAL const pc_u64 *vals, pc_u64 n, pc_u32 shift,
                               pc_u64 tiles, PC_GLOBAL const pc_u64 *offsets,
                               PC_GLOBAL pc_u64 *keys_out, PC_GLOBAL pc_u64 *vals_out) {
  PC_LOCAL_ARRAY(pc_u32, table, PC_SORT_RADIX * PC_WG);
  PC_LOCAL_ARRAY(pc_u32, sums, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_u64 first = g * (pc_u64)PC_TILE + (pc_u64)t * PC_ITEMS;
  pc_sort_table(keys, n, shift, first, table, sums);
  pc_u32 digits[PC_ITEMS];
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 i = first + k;
    if (i >= n) break;
    pc_u64 key = keys[i];
    pc_u32 d = pc_sort_digit(key, shift);
    digits[k] = d;
    /* The keys of digit d before this one: those of the work-items before t, then this
     * work-item's own. */
    pc_u32 rank = table[d * PC_WG + t] - table[d * PC_WG];
    for (pc_u32 j = 0; j < k; j++) rank += digits[j] == d ? 1u : 0u;
    pc_u64 at = offsets[(pc_u64)d * tiles + g] + rank;
    if (at >= n) {
      pc_record_fault(pc_fault, PC_FAULT_SIZE_CHANGED, 0u, at, n);
      return;
    }
    keys_out[at] = key;
    vals_out[at] = vals[i];
  }
}
