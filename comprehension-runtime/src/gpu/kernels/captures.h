/* Reading the values a comprehension captured from its caller.
 *
 * All captured values of one run travel in one buffer, `pc_caps`: a header of four pc_u64 per
 * capture, then their data (8-byte aligned):
 *   scalar  [0] offset of the value's columns (room for one value)
 *   slice   [0] offset of the elements' columns  [1] length (also the columns' capacity)
 *   rows    [0] offset of the values' columns    [1] number of rows
 *           [2] offset of the row offsets (rows + 1 pc_u64)  [3] number of values
 * Generated code reads them through these macros, with `pc_caps` (and `pc_fault`) in scope. */
#ifndef PC_CAPTURES_H
#define PC_CAPTURES_H

#define PC_LOAD(tag) PC_CAT(pc_load_, tag)
#define PC_STORE(tag) PC_CAT(pc_store_, tag)

#define PC_CAP_WORD(k, w) (((PC_GLOBAL const pc_u64 *)pc_caps)[4u * (k) + (w)])
#define PC_CAP_SCALAR(c, k) PC_LOAD(c)(pc_caps + PC_CAP_WORD(k, 0), 1, 0)
#define PC_CAP_LEN(k) PC_CAP_WORD(k, 1)
/* Element `i` of a captured collection; `i` is below its length. */
#define PC_CAP_ELEM(c, k, i) PC_LOAD(c)(pc_caps + PC_CAP_WORD(k, 0), PC_CAP_WORD(k, 1), (i))
/* `xs[i]` as written by the user: checked, faulting as Rust panics. */
#define PC_CAP_INDEX(c, k, where, i) \
  PC_CAP_ELEM(c, k, pc_index(pc_fault, (where), (i), PC_CAP_WORD(k, 1)))
#define PC_CAP_ROW_START(k, r) (((PC_GLOBAL const pc_u64 *)(pc_caps + PC_CAP_WORD(k, 2)))[r])
#define PC_CAP_ROW_LEN(k, where, r) pc_row_len(pc_fault, (where), pc_caps, (k), (r))
/* Element `i` of row `r` of a captured array of rows; both checked when the row was sized. */
#define PC_CAP_ROW_ELEM(c, k, r, i) \
  PC_LOAD(c)(pc_caps + PC_CAP_WORD(k, 0), PC_CAP_WORD(k, 3), PC_CAP_ROW_START(k, r) + (i))

/* The same for the generator of a level whose offsets may be the rows' own (`pc_rows_direct`):
 * then position `pc_j` is child `i` of row `r`, element `pc_j` of the values, read without the
 * row's start. A branch, not a select: the row's start is a load the compiler cannot speculate,
 * so the element's address does not wait for it (nor for the row's index) when it is not used. */
#define PC_CAP_LEVEL_ROW_ELEM(c, k, r, i) \
  PC_LOAD(c)(pc_caps + PC_CAP_WORD(k, 0), PC_CAP_WORD(k, 3), \
             pc_rows_direct ? pc_j : PC_CAP_ROW_START(k, r) + (i))

/* `row[i]` of a row `r` (valid) of capture `k`, as written by the user: checked. */
#define PC_CAP_ROW_INDEX(c, k, where, r, i)                                                      \
  PC_LOAD(c)(pc_caps + PC_CAP_WORD(k, 0), PC_CAP_WORD(k, 3),                                     \
             PC_CAP_ROW_START(k, r) +                                                            \
                 pc_index(pc_fault, (where), (i), PC_CAP_ROW_START(k, (r) + 1) - PC_CAP_ROW_START(k, r)))

/* The length of row `r` of capture `k`; a row past the end faults as `rows[r]` panics. */
PC_FN pc_u64 pc_row_len(pc_fault_t pc_fault, pc_u32 where, PC_GLOBAL const pc_u8 *pc_caps, pc_u32 k,
                        pc_u64 r) {
  pc_u64 rows = PC_CAP_WORD(k, 1);
  if (r >= rows) {
    pc_record_fault(pc_fault, PC_FAULT_INDEX, where, r, rows);
    return 0;
  }
  return PC_CAP_ROW_START(k, r + 1) - PC_CAP_ROW_START(k, r);
}

#endif /* PC_CAPTURES_H */
