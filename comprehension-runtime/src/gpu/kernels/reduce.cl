/* Reductions, instantiated for each reduction of a comprehension: the runtime defines
 *   PC_RED    the name prefix (pc_r0), whose PC_RED_op(fault, caps, a, b) and
 *             PC_RED_identity(fault, caps) the generated source defines;
 *   PC_RED_C  the accumulator's class;
 * then includes this file. The operator need only be associative: every combination keeps the
 * elements' order (left before right), as the CPU's reducers do.
 *
 * - PC_RED_group: a work-group's values reduced in order (a tree over neighbours);
 * - PC_RED_partials: partial results reduced in order (all of them by one work-group);
 * - PC_RED_fill: a result column set to the identity (groups with no element keep it);
 * - PC_RED_segtiles, PC_RED_segcarries, PC_RED_segapply: a segmented reduction by group: the
 *   values of a chunk, each tagged with the group (the outer element) it belongs to, groups in
 *   nondecreasing order, reduced per group into a result column. It is a scan with the
 *   segmented operator (f1, v1) . (f2, v2) = (f1 | f2, f2 ? v2 : op(v1, v2)), in three phases
 *   like the sizes' scan; the chunk continues the last group of the previous chunk through a
 *   carry (its group and its value so far), so a group split across chunks or tiles is reduced
 *   in order, whole. The last position of a group in the chunk writes the group's result;
 * - PC_RED_segone: the three phases in one work-group, for a chunk of at most one tile;
 * - PC_RED_segscanout: phase 3 of a segmented scan, every position writing its prefix (for the
 *   `parcomp::segmented` API);
 * - PC_RED_segtile: the end of a nested reduction's level kernel: its tile reduced per group in
 *   local memory, complete groups written, the tile's first and last groups summarised for the
 *   segmented reduction above (which then runs over two entries per tile, not per position). */

#define PC_R_(suffix) PC_CAT(PC_RED, suffix)
#define PC_R_T PC_T(PC_RED_C)
#define PC_R_OP(a, b) PC_R_(_op)(pc_fault, PC_CAPS, (a), (b))

PC_FN PC_R_T PC_R_(_group)(pc_fault_t pc_fault, PC_CAPS_PARAMS,
                           PC_LOCAL_PTR(PC_R_T) scratch, PC_R_T value) {
  pc_u32 t = PC_LOCAL_ID();
  scratch[t] = value;
  PC_BARRIER();
  /* Each run reduced in order into its first entry, then the runs' results in order. */
  if (t < PC_RUNS) {
    PC_R_T acc = scratch[t * PC_RUN];
    for (pc_u32 k = t * PC_RUN + 1u; k < (t + 1u) * PC_RUN; k++) acc = PC_R_OP(acc, scratch[k]);
    scratch[t * PC_RUN] = acc;
  }
  PC_BARRIER();
  if (t == 0u) {
    PC_R_T acc = scratch[0];
    for (pc_u32 r = 1; r < PC_RUNS; r++) acc = PC_R_OP(acc, scratch[r * PC_RUN]);
    scratch[0] = acc;
  }
  PC_BARRIER();
  return scratch[0];
}

/* out[at + g] = the reduction of in[g * PC_WG * per ...], in order: work-item t reduces the
 * `per` consecutive values from (g * PC_WG + t) * per, then the work-group combines them left
 * to right. Launched as one work-group (per = n / PC_WG rounded up) it reduces all n values in
 * one launch, and may write into `in` itself: every read happens before the group's barriers,
 * the one write after them. */
PC_KERNEL void PC_R_(_partials)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 n,
                                PC_GLOBAL const pc_u8 *in, pc_u64 in_cap, pc_u64 per,
                                pc_u64 out_cap, PC_GLOBAL pc_u8 *out, pc_u64 at) {
  PC_LOCAL_ARRAY(PC_R_T, scratch, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 first = (PC_GROUP_ID() * (pc_u64)PC_WG + t) * per;
  PC_R_T acc = PC_R_(_identity)(pc_fault, PC_CAPS);
  for (pc_u64 k = 0; k < per; k++) {
    if (first + k < n) acc = PC_R_OP(acc, PC_LOAD(PC_RED_C)(in, in_cap, first + k));
  }
  acc = PC_R_(_group)(pc_fault, PC_CAPS, scratch, acc);
  if (t == 0) PC_STORE(PC_RED_C)(out, out_cap, at + PC_GROUP_ID(), acc);
}

PC_KERNEL void PC_R_(_fill)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 n,
                            pc_u64 out_cap, PC_GLOBAL pc_u8 *out) {
  pc_u64 t = PC_GLOBAL_ID();
  if (t < n) PC_STORE(PC_RED_C)(out, out_cap, t, PC_R_(_identity)(pc_fault, PC_CAPS));
}

/* The segmented operator on (flag, value) pairs. */
PC_FN void PC_R_(_seg)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_bool *f1,
                       PC_R_T *v1, pc_bool f2, PC_R_T v2) {
  *v1 = f2 ? v2 : PC_R_OP(*v1, v2);
  *f1 = (pc_bool)(*f1 | f2);
}

/* The work-group's inclusive segmented scan, in order: work-item t's (f, v) goes to
 * (flags[t], scratch[t]); afterwards (flags[t], scratch[t]) is the inclusive prefix up to t.
 * By runs (PC_RUN): each run scanned serially in place, the runs' last entries then made whole
 * prefixes in order by one work-item, and every other entry combined with the previous run's
 * last. Every work-item of the group calls it (it has barriers). */
PC_FN void PC_R_(_segscan)(pc_fault_t pc_fault, PC_CAPS_PARAMS,
                           PC_LOCAL_PTR(pc_bool) flags, PC_LOCAL_PTR(PC_R_T) scratch,
                           pc_bool f, PC_R_T v) {
  pc_u32 t = PC_LOCAL_ID();
  scratch[t] = v;
  flags[t] = f;
  PC_BARRIER();
  if (t < PC_RUNS) {
    pc_u32 b = t * PC_RUN;
    pc_bool rf = flags[b];
    PC_R_T rv = scratch[b];
    for (pc_u32 k = b + 1u; k < b + PC_RUN; k++) {
      PC_R_(_seg)(pc_fault, PC_CAPS, &rf, &rv, flags[k], scratch[k]);
      flags[k] = rf;
      scratch[k] = rv;
    }
  }
  PC_BARRIER();
  if (t == 0u) {
    for (pc_u32 r = 1; r < PC_RUNS; r++) {
      pc_u32 last = (r + 1u) * PC_RUN - 1u;
      pc_bool rf = flags[r * PC_RUN - 1u];
      PC_R_T rv = scratch[r * PC_RUN - 1u];
      PC_R_(_seg)(pc_fault, PC_CAPS, &rf, &rv, flags[last], scratch[last]);
      flags[last] = rf;
      scratch[last] = rv;
    }
  }
  PC_BARRIER();
  /* Entries other than a run's last read the previous run's last (final now) and write only
   * themselves. */
  if (t >= PC_RUN && t % PC_RUN != PC_RUN - 1u) {
    pc_bool rf = flags[t - t % PC_RUN - 1u];
    PC_R_T rv = scratch[t - t % PC_RUN - 1u];
    PC_R_(_seg)(pc_fault, PC_CAPS, &rf, &rv, flags[t], scratch[t]);
    flags[t] = rf;
    scratch[t] = rv;
  }
  PC_BARRIER();
}

/* A nested reduction's level kernel ends here, every work-item of the group calling it (it
 * has barriers): the work-group's tile of `m` positions (work-item t holding position t, its
 * `group` and its contribution `value`; work-items from m on hold none) reduced per group in
 * local memory, in order. A group that starts and ends inside the tile, other than the tile's
 * first and last, is complete: its result is written to `res` at once. The tile's first and
 * last groups may continue in the neighbouring tiles: the tile writes them as two entries of a
 * summary (its first group's part, then its last group's — the identity when the tile holds
 * one group), which the segmented reduction over all tiles' summaries (_segtiles ...) finishes
 * with the chunk's carry. No value or group per position goes through memory. With
 * `first_done`, the caller wrote the first entry itself (a part that precedes every entry of
 * this tile's reduction): the first group here then started inside the tile, and is complete
 * unless it is also the last. */
PC_FN void PC_R_(_segtile)(pc_fault_t pc_fault, PC_CAPS_PARAMS,
                           PC_LOCAL_PTR(PC_R_T) scratch, PC_LOCAL_PTR(pc_bool) flags,
                           PC_LOCAL_PTR(pc_u64) groups, pc_u32 m, pc_u64 group, PC_R_T value,
                           pc_u64 res_cap, PC_GLOBAL pc_u8 *res, pc_u64 sum_cap,
                           PC_GLOBAL pc_u8 *sum_vals, PC_GLOBAL pc_u64 *sum_groups,
                           pc_bool first_done) {
  pc_u32 t = PC_LOCAL_ID();
  pc_bool live = (pc_bool)(t < m);
  groups[t] = group;
  PC_BARRIER();
  pc_u64 first = groups[0];
  pc_u64 last = groups[m - 1u];
  pc_bool starts = (pc_bool)(live && (t == 0u || groups[t - 1u] != group));
  PC_R_(_segscan)(pc_fault, PC_CAPS, flags, scratch, starts, value);
  if (live && (t + 1u == m || groups[t + 1u] != group)) {
    pc_u64 tile = PC_GROUP_ID();
    pc_bool summarised_first = (pc_bool)(group == first && !first_done);
    if (summarised_first) {
      PC_STORE(PC_RED_C)(sum_vals, sum_cap, 2u * tile, scratch[t]);
      sum_groups[2u * tile] = first;
    }
    if (group == last) {
      PC_STORE(PC_RED_C)(sum_vals, sum_cap, 2u * tile + 1u,
                         summarised_first ? PC_R_(_identity)(pc_fault, PC_CAPS) : scratch[t]);
      sum_groups[2u * tile + 1u] = last;
    }
    if (!summarised_first && group != last) PC_STORE(PC_RED_C)(res, res_cap, group, scratch[t]);
  }
}

/* Whether position j starts a group: a group other than the previous position's (for j = 0,
 * the carry's). */
#define PC_R_FLAG(j) \
  ((pc_bool)((j) == 0 ? groups[0] != carry_group[0] : groups[j] != groups[(j) - 1]))

/* Phase 1: the (flag, value) aggregate of every tile; work-item t takes PC_ITEMS consecutive
 * positions, then the work-group combines in order. */
PC_KERNEL void PC_R_(_segtiles)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 n,
                                PC_GLOBAL const pc_u8 *vals, pc_u64 vals_cap,
                                PC_GLOBAL const pc_u64 *groups,
                                PC_GLOBAL const pc_u64 *carry_group, PC_GLOBAL pc_u64 *agg_flags,
                                pc_u64 agg_cap, PC_GLOBAL pc_u8 *agg_vals) {
  PC_LOCAL_ARRAY(PC_R_T, scratch, PC_WG);
  PC_LOCAL_ARRAY(pc_bool, flags, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 first = PC_GROUP_ID() * (pc_u64)PC_TILE + (pc_u64)t * PC_ITEMS;
  pc_bool f = 0;
  PC_R_T v = PC_R_(_identity)(pc_fault, PC_CAPS);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 j = first + k;
    if (j < n) PC_R_(_seg)(pc_fault, PC_CAPS, &f, &v, PC_R_FLAG(j), PC_LOAD(PC_RED_C)(vals, vals_cap, j));
  }
  /* The tile's aggregate is the last entry of the work-group's inclusive scan. */
  PC_R_(_segscan)(pc_fault, PC_CAPS, flags, scratch, f, v);
  if (t == 0) {
    agg_flags[PC_GROUP_ID()] = flags[PC_WG - 1u];
    PC_STORE(PC_RED_C)(agg_vals, agg_cap, PC_GROUP_ID(), scratch[PC_WG - 1u]);
  }
}

/* Phase 2, one work-group: the tiles' aggregates replaced by their exclusive prefixes, starting
 * from the carry (flag 1: it starts its own group, which the chunk's first positions continue
 * when they have the carry's group). */
PC_KERNEL void PC_R_(_segcarries)(pc_fault_t pc_fault, PC_CAPS_PARAMS,
                                  pc_u64 tiles, PC_GLOBAL pc_u64 *agg_flags, pc_u64 agg_cap,
                                  PC_GLOBAL pc_u8 *agg_vals, PC_GLOBAL const pc_u8 *carry_val) {
  PC_LOCAL_ARRAY(PC_R_T, scratch, PC_WG);
  PC_LOCAL_ARRAY(pc_bool, flags, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_bool carry_f = 1;
  PC_R_T carry_v = PC_LOAD(PC_RED_C)(carry_val, 1, 0);
  for (pc_u64 base = 0; base < tiles; base += PC_WG) {
    pc_u64 i = base + t;
    pc_bool f = 0;
    PC_R_T v = PC_R_(_identity)(pc_fault, PC_CAPS);
    if (i < tiles) {
      f = (pc_bool)agg_flags[i];
      v = PC_LOAD(PC_RED_C)(agg_vals, agg_cap, i);
    }
    /* Inclusive scan of this block, in order: element t combines with t - s (its left). */
    PC_R_(_segscan)(pc_fault, PC_CAPS, flags, scratch, f, v);
    /* Exclusive prefix of element t: the carry, then the inclusive prefix of t - 1. */
    pc_bool ef = carry_f;
    PC_R_T ev = carry_v;
    if (t > 0) PC_R_(_seg)(pc_fault, PC_CAPS, &ef, &ev, flags[t - 1], scratch[t - 1]);
    pc_bool block_f = flags[PC_WG - 1];
    PC_R_T block_v = scratch[PC_WG - 1];
    PC_BARRIER();
    if (i < tiles) {
      agg_flags[i] = ef;
      PC_STORE(PC_RED_C)(agg_vals, agg_cap, i, ev);
    }
    PC_R_(_seg)(pc_fault, PC_CAPS, &carry_f, &carry_v, block_f, block_v);
    PC_BARRIER();
  }
}

/* The start of phase 3, for _segapply and _segscanout: (rf, rv), the (flag, value) of
 * everything before work-item t's first position `first` — its tile's carry-in, then the
 * positions of the work-items before it in the tile. Every work-item of the group calls it (it
 * has barriers). */
PC_FN void PC_R_(_carry_in)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 n,
                            PC_GLOBAL const pc_u8 *vals, pc_u64 vals_cap,
                            PC_GLOBAL const pc_u64 *groups, PC_GLOBAL const pc_u64 *carry_group,
                            PC_GLOBAL const pc_u64 *agg_flags, pc_u64 agg_cap,
                            PC_GLOBAL const pc_u8 *agg_vals, PC_LOCAL_PTR(pc_bool) flags,
                            PC_LOCAL_PTR(PC_R_T) scratch, pc_u64 first, pc_bool *rf,
                            PC_R_T *rv) {
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 g = PC_GROUP_ID();
  pc_bool f = 0;
  PC_R_T v = PC_R_(_identity)(pc_fault, PC_CAPS);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 j = first + k;
    if (j < n) PC_R_(_seg)(pc_fault, PC_CAPS, &f, &v, PC_R_FLAG(j), PC_LOAD(PC_RED_C)(vals, vals_cap, j));
  }
  PC_R_(_segscan)(pc_fault, PC_CAPS, flags, scratch, f, v);
  *rf = (pc_bool)agg_flags[g];
  *rv = PC_LOAD(PC_RED_C)(agg_vals, agg_cap, g);
  if (t > 0) PC_R_(_seg)(pc_fault, PC_CAPS, rf, rv, flags[t - 1], scratch[t - 1]);
}

/* Phase 3: every position's value (its tile's carry-in, its work-item's prefix, its own
 * running value); the last position of each group writes the group's result, and the chunk's
 * last position the next chunk's carry. */
PC_KERNEL void PC_R_(_segapply)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 n,
                                PC_GLOBAL const pc_u8 *vals, pc_u64 vals_cap,
                                PC_GLOBAL const pc_u64 *groups,
                                PC_GLOBAL const pc_u64 *carry_group,
                                PC_GLOBAL const pc_u64 *agg_flags, pc_u64 agg_cap,
                                PC_GLOBAL const pc_u8 *agg_vals, pc_u64 res_cap,
                                PC_GLOBAL pc_u8 *res, PC_GLOBAL pc_u64 *next_group,
                                PC_GLOBAL pc_u8 *next_val) {
  PC_LOCAL_ARRAY(PC_R_T, scratch, PC_WG);
  PC_LOCAL_ARRAY(pc_bool, flags, PC_WG);
  pc_u64 first = PC_GROUP_ID() * (pc_u64)PC_TILE + (pc_u64)PC_LOCAL_ID() * PC_ITEMS;
  pc_bool rf;
  PC_R_T rv;
  PC_R_(_carry_in)(pc_fault, PC_CAPS, n, vals, vals_cap, groups, carry_group, agg_flags, agg_cap,
                   agg_vals, flags, scratch, first, &rf, &rv);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 j = first + k;
    if (j >= n) break;
    PC_R_(_seg)(pc_fault, PC_CAPS, &rf, &rv, PC_R_FLAG(j), PC_LOAD(PC_RED_C)(vals, vals_cap, j));
    if (j + 1 == n || groups[j + 1] != groups[j]) PC_STORE(PC_RED_C)(res, res_cap, groups[j], rv);
    if (j + 1 == n) {
      next_group[0] = groups[j];
      PC_STORE(PC_RED_C)(next_val, 1, 0, rv);
    }
  }
}

/* All three phases in one work-group, for a chunk of at most one tile (a nested reduction's
 * summaries, two entries per tile of its level kernel, usually are): every work-item's (flag,
 * value) aggregate scanned in local memory, then every position's value from the carry and the
 * work-items before, as _segapply computes it. With `fresh` the chunk is the run's first, and
 * the carry is no group's identity (no launch sets it). */
PC_KERNEL void PC_R_(_segone)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 n,
                              PC_GLOBAL const pc_u8 *vals, pc_u64 vals_cap,
                              PC_GLOBAL const pc_u64 *groups, pc_u32 fresh,
                              PC_GLOBAL const pc_u64 *carry_group,
                              PC_GLOBAL const pc_u8 *carry_val, pc_u64 res_cap,
                              PC_GLOBAL pc_u8 *res, PC_GLOBAL pc_u64 *next_group,
                              PC_GLOBAL pc_u8 *next_val) {
  PC_LOCAL_ARRAY(PC_R_T, scratch, PC_WG);
  PC_LOCAL_ARRAY(pc_bool, flags, PC_WG);
  pc_u32 t = PC_LOCAL_ID();
  pc_u64 first = (pc_u64)t * PC_ITEMS;
  /* Whether position j starts a group (for j = 0: a group other than the carry's). */
#define PC_R_STARTS(j) \
  ((pc_bool)((j) == 0 ? fresh || groups[0] != carry_group[0] : groups[j] != groups[(j) - 1]))
  pc_bool f = 0;
  PC_R_T v = PC_R_(_identity)(pc_fault, PC_CAPS);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 j = first + k;
    if (j < n) PC_R_(_seg)(pc_fault, PC_CAPS, &f, &v, PC_R_STARTS(j), PC_LOAD(PC_RED_C)(vals, vals_cap, j));
  }
  PC_R_(_segscan)(pc_fault, PC_CAPS, flags, scratch, f, v);
  pc_bool rf = 1;
  PC_R_T rv = fresh ? PC_R_(_identity)(pc_fault, PC_CAPS) : PC_LOAD(PC_RED_C)(carry_val, 1, 0);
  if (t > 0) PC_R_(_seg)(pc_fault, PC_CAPS, &rf, &rv, flags[t - 1], scratch[t - 1]);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 j = first + k;
    if (j >= n) break;
    PC_R_(_seg)(pc_fault, PC_CAPS, &rf, &rv, PC_R_STARTS(j), PC_LOAD(PC_RED_C)(vals, vals_cap, j));
    if (j + 1 == n || groups[j + 1] != groups[j]) PC_STORE(PC_RED_C)(res, res_cap, groups[j], rv);
    if (j + 1 == n) {
      next_group[0] = groups[j];
      PC_STORE(PC_RED_C)(next_val, 1, 0, rv);
    }
  }
#undef PC_R_STARTS
}

/* Phase 3 of a scan (the segmented API's scans): like _segapply, but every position writes
 * its own value: the inclusive prefix of its group, or with `exclusive` the prefix before it
 * (the identity where a group starts). */
PC_KERNEL void PC_R_(_segscanout)(pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 n,
                                  PC_GLOBAL const pc_u8 *vals, pc_u64 vals_cap,
                                  PC_GLOBAL const pc_u64 *groups,
                                  PC_GLOBAL const pc_u64 *carry_group,
                                  PC_GLOBAL const pc_u64 *agg_flags, pc_u64 agg_cap,
                                  PC_GLOBAL const pc_u8 *agg_vals, pc_u32 exclusive,
                                  pc_u64 out_cap, PC_GLOBAL pc_u8 *out) {
  PC_LOCAL_ARRAY(PC_R_T, scratch, PC_WG);
  PC_LOCAL_ARRAY(pc_bool, flags, PC_WG);
  pc_u64 first = PC_GROUP_ID() * (pc_u64)PC_TILE + (pc_u64)PC_LOCAL_ID() * PC_ITEMS;
  pc_bool rf;
  PC_R_T rv;
  PC_R_(_carry_in)(pc_fault, PC_CAPS, n, vals, vals_cap, groups, carry_group, agg_flags, agg_cap,
                   agg_vals, flags, scratch, first, &rf, &rv);
  for (pc_u32 k = 0; k < PC_ITEMS; k++) {
    pc_u64 j = first + k;
    if (j >= n) break;
    pc_bool starts = PC_R_FLAG(j);
    if (exclusive)
      PC_STORE(PC_RED_C)(out, out_cap, j, starts ? PC_R_(_identity)(pc_fault, PC_CAPS) : rv);
    PC_R_(_seg)(pc_fault, PC_CAPS, &rf, &rv, starts, PC_LOAD(PC_RED_C)(vals, vals_cap, j));
    if (!exclusive) PC_STORE(PC_RED_C)(out, out_cap, j, rv);
  }
}

#undef PC_R_FLAG
#undef PC_R_OP
#undef PC_R_T
#undef PC_R_
