/* Rust's scalar semantics in the kernel dialect: see the functions' comments. */
#ifndef PC_SCALAR_H
#define PC_SCALAR_H
#endif /* PC_SCALAR_H */
