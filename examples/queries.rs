//! Questions over a table, answered with comprehensions: `group by`, `order by`, `take`.
//!
//! The data set — a year of orders of a small shop, 200,000 rows — is generated (in
//! `support/orders.rs`) with a fixed seed, so every run prints the same tables.
//!
//! ```text
//! cargo run --release --example queries
//! ```

use parcomp::{par, par_count, par_max, par_max_by_key, par_sum};
use std::time::Instant;

#[path = "support/orders.rs"]
mod orders;

use orders::orders;

fn euros(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

fn main() {
    let orders = orders(200_000);
    let start = Instant::now();
    println!("{} orders, {} in all\n", orders.len(), euros(par_sum![o.amount | o <- &orders]));

    println!("The five cities with the most revenue:");
    let cities = par![(city, amount.len(), par_sum![a | a <- amount]) |
                      o <- &orders, let city = o.city, let amount = o.amount,
                      group by city,
                      order by par_sum![a | a <- amount] desc,
                      take 5];
    println!("  {:<10} {:>8} {:>14}", "city", "orders", "revenue");
    for (city, count, revenue) in &cities {
        println!("  {city:<10} {count:>8} {:>14}", euros(*revenue));
    }

    println!("\nEach category: orders, average and largest order:");
    let categories = par![(category, amount.len(),
                           par_sum![a | a <- amount] / amount.len() as u64,
                           par_max![a | a <- amount]) |
                          o <- &orders, let category = o.category, let amount = o.amount,
                          group by category];
    println!("  {:<10} {:>8} {:>10} {:>10}", "category", "orders", "average", "largest");
    for (category, count, average, largest) in &categories {
        let largest = largest.map(euros).unwrap_or_default();
        println!("  {category:<10} {count:>8} {:>10} {largest:>10}", euros(*average));
    }

    println!("\nThe five largest orders (the first placed first among equals):");
    let largest = par![(o.id, o.customer.as_str(), o.city, o.amount) |
                       o <- &orders, order by o.amount desc, take 5];
    for (id, customer, city, amount) in &largest {
        println!("  #{id:<7} {customer:<14} {city:<10} {:>10}", euros(*amount));
    }

    println!("\nThe five customers with the most orders:");
    let loyal = par![(customer, id.len(), par_sum![a | a <- amount]) |
                     o <- &orders, let customer = o.customer.as_str(), let id = o.id,
                     let amount = o.amount,
                     group by customer,
                     order by (id.len(), customer) desc,
                     take 5];
    for (customer, count, spent) in &loyal {
        println!("  {customer:<14} {count:>4} orders {:>12}", euros(*spent));
    }

    println!("\nRevenue by month in Oslo and Lima, first quarter:");
    let months = par![(month, city, par_sum![a | a <- amount]) |
                      o <- &orders, o.city == "Oslo" || o.city == "Lima", o.month <= 3,
                      let month = o.month, let city = o.city, let amount = o.amount,
                      group by (month, city)];
    for (month, city, revenue) in &months {
        println!("  {month:>2} {city:<6} {:>12}", euros(*revenue));
    }

    let busiest = par_max_by_key!(|m: &(u8, usize)| m.1;
                                  (month, id.len()) |
                                  o <- &orders, let month = o.month, let id = o.id,
                                  group by month);
    if let Some((month, count)) = busiest {
        println!("\nThe busiest month: {month} ({count} orders)");
    }
    let small = par_count![o | o <- &orders, o.amount < 500];
    println!("Orders under 5.00: {small}");
    println!("\n(answered in {:.1?}; {})", start.elapsed(), parcomp::backend());
}
