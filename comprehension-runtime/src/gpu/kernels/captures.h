/* Reading the values a comprehension captured from its caller.
 *
 * The captures of one run come in `pc_caps`, a header of four pc_u64 per capture followed by
 * the scalars' values (8-byte aligned), and in one buffer per collection for its data:
 * `pc_capv<k>` holds capture k's values and `pc_capo<k>` an array of rows' offsets. A
 * collection copied from the host lies in `pc_caps` after the scalars (its buffers are
 * `pc_caps` itself); one kept on the device (a `DeviceVec`, a `DeviceJagged`), or the caller's
 * own slice on a device whose memory is the host's, is read where it lies, from a buffer of its
 * own — no copy per run; there a slice of tuples is read as the records it is in Rust's
 * memory, each component at its offset (`pc_capload<k>`, which the program defines for each
 * collection), not as columns converted on the host. The header's words:
 *   scalar  [0] offset of the value's columns in pc_caps (room for one value)
 *   slice   [0] offset of the elements' columns (or records) in pc_capv<k>  [1] length
 *           (the columns' capacity)
 *   rows    [0] offset of the values' columns (or records) in pc_capv<k>  [1] number of rows
 *           [2] offset of the row offsets in pc_capo<k> (rows + 1 pc_u64)  [3] number of values
 * Every function and kernel that reads captures takes them all as PC_CAPS_PARAMS and passes
 * them on as PC_CAPS (the program defines both from its captures' kinds). Generated code reads
 * them through these macros, with them and `pc_fault` in scope; `k` is a literal. */
#ifndef PC_CAPTURES_H
#define PC_CAPTURES_H

#define PC_LOAD(tag) PC_CAT(pc_load_, tag)
#define PC_STORE(tag) PC_CAT(pc_store_, tag)

/* The load of capture `k`'s values of class `c`: the class's, from columns, or the capture's
 * own where its values are records read where they lie in the host's memory (the program
 * defines `pc_capload<k>`). */
#define PC_CAP_LOAD(c, k) PC_CAT(pc_capload, k)(c)
#define PC_CAP_WORD_AT(k, w) (((PC_GLOBAL const pc_u64 *)pc_caps)[4u * (k) + (w)])
/* A header word, read in the header's buffer; a kernel that takes the words as arguments
 * (`pc_cw_<k>_<w>`, a rows kernel's) redefines it to read those. */
#define PC_CAP_WORD(k, w) PC_CAP_WORD_AT(k, w)
#define PC_CAP_VALUES(k) (PC_CAT(pc_capv, k) + PC_CAP_WORD(k, 0))
#define PC_CAP_STARTS(k) ((PC_GLOBAL const pc_u64 *)(PC_CAT(pc_capo, k) + PC_CAP_WORD(k, 2)))
#define PC_CAP_SCALAR(c, k) PC_LOAD(c)(pc_caps + PC_CAP_WORD(k, 0), 1, 0)
#define PC_CAP_LEN(k) PC_CAP_WORD(k, 1)
/* Element `i` of a captured collection; `i` is below its length. */
#define PC_CAP_ELEM(c, k, i) PC_CAP_LOAD(c, k)(PC_CAP_VALUES(k), PC_CAP_WORD(k, 1), (i))
/* `xs[i]` as written by the user: checked, faulting as Rust panics. */
#define PC_CAP_INDEX(c, k, where, i) \
  PC_CAP_ELEM(c, k, pc_index(pc_fault, (where), (i), PC_CAP_WORD(k, 1)))
#define PC_CAP_ROW_START(k, r) (PC_CAP_STARTS(k)[r])
#define PC_CAP_ROW_LEN(k, where, r) \
  pc_row_len(pc_fault, (where), PC_CAP_WORD(k, 1), PC_CAP_STARTS(k), (r))
/* Element `i` of row `r` of a captured array of rows; both checked when the row was sized. */
#define PC_CAP_ROW_ELEM(c, k, r, i) \
  PC_CAP_LOAD(c, k)(PC_CAP_VALUES(k), PC_CAP_WORD(k, 3), PC_CAP_ROW_START(k, r) + (i))

/* The same for the generator of a level whose offsets may be the rows' own (`pc_rows_direct`):
 * then position `pc_j` is child `i` of row `r`, element `pc_j` of the values, read without the
 * row's start. A branch, not a select: the row's start is a load the compiler cannot speculate,
 * so the element's address does not wait for it (nor for the row's index) when it is not used. */
#define PC_CAP_LEVEL_ROW_ELEM(c, k, r, i) \
  PC_CAP_LOAD(c, k)(PC_CAP_VALUES(k), PC_CAP_WORD(k, 3), \
             PC_ROWS_DIRECT ? pc_j : PC_CAP_ROW_START(k, r) + (i))
/* `pc_rows_direct`, or its value where the kernel wrote a loop for each (it is the same for
 * every position of a launch). */
#define PC_ROWS_DIRECT pc_rows_direct

/* `row[i]` of a row `r` (valid) of capture `k`, as written by the user: checked. */
#define PC_CAP_ROW_INDEX(c, k, where, r, i)                                                      \
  PC_CAP_LOAD(c, k)(PC_CAP_VALUES(k), PC_CAP_WORD(k, 3),                                         \
             PC_CAP_ROW_START(k, r) +                                                            \
                 pc_index(pc_fault, (where), (i), PC_CAP_ROW_START(k, (r) + 1) - PC_CAP_ROW_START(k, r)))

/* The length of row `r` of `rows` rows starting at `starts`; a row past the end faults as
 * `rows[r]` panics. */
PC_FN pc_u64 pc_row_len(pc_fault_t pc_fault, pc_u32 where, pc_u64 rows,
                        PC_GLOBAL const pc_u64 *starts, pc_u64 r) {
  if (PC_UNLIKELY(r >= rows)) {
    pc_record_fault(pc_fault, PC_FAULT_INDEX, where, r, rows);
    return 0;
  }
  return starts[r + 1] - starts[r];
}

#endif /* PC_CAPTURES_H */
