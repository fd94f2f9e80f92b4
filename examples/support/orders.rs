//! The `queries` examples' data set: a year of orders of a small shop, generated with a fixed
//! seed, so that every run (and every example that reads it) sees the same table.

/// One order.
pub struct Order {
    pub id: u32,
    pub customer: String,
    pub city: &'static str,
    pub category: &'static str,
    /// 1..=12.
    pub month: u8,
    /// In cents.
    pub amount: u64,
}

pub const CITIES: [&str; 8] =
    ["Lisbon", "Oslo", "Lima", "Osaka", "Nairobi", "Quito", "Tallinn", "Perth"];
pub const CATEGORIES: [&str; 5] = ["books", "games", "garden", "kitchen", "music"];
const NAMES: [&str; 12] = [
    "Ada", "Alan", "Barbara", "Donald", "Edsger", "Frances", "Grace", "John", "Ken", "Leslie",
    "Margaret", "Niklaus",
];

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub fn orders(n: u32) -> Vec<Order> {
    let mut rng = Rng(2026);
    (0..n)
        .map(|id| {
            // Skewed: some cities order far more than others.
            let city = CITIES[(rng.below(64) as f64).sqrt() as usize];
            let customer = format!("{} #{}", NAMES[rng.below(12) as usize], rng.below(200));
            let category = CATEGORIES[rng.below(5) as usize];
            let month = 1 + rng.below(12) as u8;
            let amount =
                199 + rng.below(4_000) * (1 + rng.below(3) * rng.below(3)) + rng.below(997);
            Order { id, customer, city, category, month, amount }
        })
        .collect()
}
