//! The `queries` example's questions answered from a Parquet file: the file is read into Arrow
//! arrays (the `parquet` crate), and the comprehensions read those arrays where they lie —
//! the number columns as they are, the text columns as `&str`s borrowed from Arrow's buffers.
//!
//! ```text
//! cargo run --release --manifest-path examples/parquet/Cargo.toml            # writes, then reads
//! cargo run --release --manifest-path examples/parquet/Cargo.toml -- FILE    # reads FILE
//! ```
//!
//! With no file, it writes the `queries` example's table (200,000 orders, the same seed) to a
//! Parquet file first, answers from the file, and checks every answer against the same
//! question asked of the table in memory.

use arrow_array::{Array, RecordBatch, StringArray, UInt32Array, UInt64Array, UInt8Array};
use arrow_schema::{DataType, Field, Schema};
use parcomp::{par, par_count, par_max, par_sum};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use std::error::Error;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[path = "../../support/orders.rs"]
mod orders;

use orders::Order;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// Writes `orders` as a Parquet file at `path`.
fn write(orders: &[Order], path: &Path) -> Result<()> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::UInt32, false),
        Field::new("customer", DataType::Utf8, false),
        Field::new("city", DataType::Utf8, false),
        Field::new("category", DataType::Utf8, false),
        Field::new("month", DataType::UInt8, false),
        Field::new("amount", DataType::UInt64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(UInt32Array::from_iter_values(orders.iter().map(|o| o.id))),
            Arc::new(StringArray::from_iter_values(orders.iter().map(|o| &o.customer))),
            Arc::new(StringArray::from_iter_values(orders.iter().map(|o| o.city))),
            Arc::new(StringArray::from_iter_values(orders.iter().map(|o| o.category))),
            Arc::new(UInt8Array::from_iter_values(orders.iter().map(|o| o.month))),
            Arc::new(UInt64Array::from_iter_values(orders.iter().map(|o| o.amount))),
        ],
    )?;
    let mut writer = ArrowWriter::try_new(File::create(path)?, schema, None)?;
    writer.write(&batch)?;
    writer.close()?;
    Ok(())
}

/// Reads the whole file as one record batch.
fn read(path: &Path) -> Result<RecordBatch> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let rows = usize::try_from(builder.metadata().file_metadata().num_rows())?;
    let mut batches = builder.with_batch_size(rows.max(1)).build()?;
    match batches.next() {
        Some(batch) => Ok(batch?),
        None => Err("the file holds no rows".into()),
    }
}

/// Column `name` of `batch` as an array of type `A`.
fn column<'a, A: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a A> {
    let column = batch.column_by_name(name).ok_or_else(|| format!("no column `{name}`"))?;
    column.as_any().downcast_ref::<A>().ok_or_else(|| {
        format!("the column `{name}` is {}, not what this example reads", column.data_type()).into()
    })
}

/// The text of a column without nulls, each value borrowed from Arrow's buffer.
fn texts<'a>(column: &'a StringArray, name: &str) -> Result<Vec<&'a str>> {
    if column.null_count() > 0 {
        return Err(format!("the column `{name}` has null values").into());
    }
    Ok(column.iter().map(|s| s.unwrap_or_default()).collect())
}

fn euros(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// The answers to the `queries` example's questions.
#[derive(Debug, PartialEq)]
struct Answers<'a> {
    total: u64,
    cities: Vec<(&'a str, usize, u64)>,
    categories: Vec<(&'a str, usize, u64, Option<u64>)>,
    largest: Vec<(u32, &'a str, &'a str, u64)>,
    loyal: Vec<(&'a str, usize, u64)>,
    months: Vec<(u8, &'a str, u64)>,
    small: usize,
}

/// The answers from the columns: the numbers read in place (`&UInt64Array`, and its values'
/// buffer indexed by row), the text as `&str`s.
fn answer<'a>(
    ids: &UInt32Array,
    customer: &[&'a str],
    city: &[&'a str],
    category: &[&'a str],
    month: &UInt8Array,
    amount: &UInt64Array,
) -> Answers<'a> {
    let n = amount.len();
    let (ids, months, amounts) = (ids.values(), month.values(), amount.values());
    Answers {
        total: par_sum![a | a <- amount],
        cities: par![(c, a.len(), par_sum![x | x <- a]) |
                     i <- 0..n, let c = city[i], let a = amounts[i],
                     group by c, order by par_sum![x | x <- a] desc, take 5],
        categories: par![(c, a.len(), par_sum![x | x <- a] / a.len() as u64, par_max![x | x <- a]) |
                         i <- 0..n, let c = category[i], let a = amounts[i], group by c],
        largest: par![(ids[i], customer[i], city[i], amounts[i]) |
                      i <- 0..n, order by amounts[i] desc, take 5],
        loyal: par![(c, id.len(), par_sum![x | x <- a]) |
                    i <- 0..n, let c = customer[i], let id = ids[i], let a = amounts[i],
                    group by c, order by (id.len(), c) desc, take 5],
        months: par![(m, c, par_sum![x | x <- a]) |
                     i <- 0..n, city[i] == "Oslo" || city[i] == "Lima", months[i] <= 3,
                     let m = months[i], let c = city[i], let a = amounts[i],
                     group by (m, c)],
        small: par_count![a | a <- amount, a < 500],
    }
}

fn main() -> Result<()> {
    let given = std::env::args_os().nth(1).map(PathBuf::from);
    let (path, table) = match given {
        Some(path) => (path, None),
        None => {
            let path = std::env::temp_dir().join("parcomp-orders.parquet");
            let table = orders::orders(200_000);
            write(&table, &path)?;
            (path, Some(table))
        }
    };
    let start = Instant::now();
    let batch = read(&path)?;
    println!("{}: {} orders, read in {:.1?}", path.display(), batch.num_rows(), start.elapsed());
    let customer = texts(column(&batch, "customer")?, "customer")?;
    let city = texts(column(&batch, "city")?, "city")?;
    let category = texts(column(&batch, "category")?, "category")?;
    let start = Instant::now();
    let answers = answer(
        column(&batch, "id")?,
        &customer,
        &city,
        &category,
        column(&batch, "month")?,
        column(&batch, "amount")?,
    );
    let took = start.elapsed();

    println!("{} in all\n", euros(answers.total));
    println!("The five cities with the most revenue:");
    for (city, count, revenue) in &answers.cities {
        println!("  {city:<10} {count:>8} {:>14}", euros(*revenue));
    }
    println!("\nEach category: orders, average and largest order:");
    for (category, count, average, largest) in &answers.categories {
        let largest = largest.map(euros).unwrap_or_default();
        println!("  {category:<10} {count:>8} {:>10} {largest:>10}", euros(*average));
    }
    println!("\nThe five largest orders (the first placed first among equals):");
    for (id, customer, city, amount) in &answers.largest {
        println!("  #{id:<7} {customer:<14} {city:<10} {:>10}", euros(*amount));
    }
    println!("\nThe five customers with the most orders:");
    for (customer, count, spent) in &answers.loyal {
        println!("  {customer:<14} {count:>4} orders {:>12}", euros(*spent));
    }
    println!("\nRevenue by month in Oslo and Lima, first quarter:");
    for (month, city, revenue) in &answers.months {
        println!("  {month:>2} {city:<6} {:>12}", euros(*revenue));
    }
    println!("Orders under 5.00: {}", answers.small);
    println!("\n(answered in {took:.1?}; {})", parcomp::backend());

    // The same questions asked of the table in memory give the same answers.
    if let Some(table) = table {
        let ids = UInt32Array::from_iter_values(table.iter().map(|o| o.id));
        let months = UInt8Array::from_iter_values(table.iter().map(|o| o.month));
        let amounts = UInt64Array::from_iter_values(table.iter().map(|o| o.amount));
        let customer: Vec<&str> = table.iter().map(|o| o.customer.as_str()).collect();
        let city: Vec<&str> = table.iter().map(|o| o.city).collect();
        let category: Vec<&str> = table.iter().map(|o| o.category).collect();
        let in_memory = answer(&ids, &customer, &city, &category, &months, &amounts);
        assert_eq!(answers, in_memory, "the file's answers differ from the table's");
        let by_hand: u64 = table.iter().map(|o| o.amount).sum();
        assert_eq!(answers.total, by_hand);
        println!("every answer checked against the table in memory");
    }
    Ok(())
}
