//! Sorting and ordered collecting with one shared sort in the wasm module.
//!
//! Every `sort_by` of the standard library is a separate copy of its sort for each element
//! type and comparator (about 5 KB of wasm each), and so is every `collect` into a
//! `BTreeMap` or `BTreeSet` (which sorts its input first). Where the input is small and the
//! call is not hot (a skill's artifacts, a spec's states, a record's fields), the functions
//! here sort a list of indices with one comparator type instead, and collect by inserting;
//! only a thin wrapper is generic. The index build's hot sorts keep the standard library's.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The indices `0..n` in the order `cmp` gives, ties in index order (a stable order): a
/// bottom-up merge sort, written once here rather than the standard library's sort
/// instantiated for `usize` (its small-sort networks and quicksort, about 6 KB of wasm).
#[inline(never)]
fn order(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    let mut buf: Vec<usize> = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while k < end {
                // The left run's element goes first unless the right one is strictly less.
                let take_left = j >= end
                    || (i < mid
                        && matches!((idx.get(i), idx.get(j)), (Some(&a), Some(&b)) if cmp(b, a) != Ordering::Less));
                let from = if take_left { &mut i } else { &mut j };
                if let (Some(slot), Some(&x)) = (buf.get_mut(k), idx.get(*from)) {
                    *slot = x;
                }
                *from += 1;
                k += 1;
            }
            start = end;
        }
        std::mem::swap(&mut idx, &mut buf);
        width *= 2;
    }
    idx
}

/// Puts `v[idx[k]]` at `k` for every `k`, in place (`idx` is a permutation of the indices
/// of `v`; it is consumed as the cycles are followed).
fn permute<T>(v: &mut [T], mut idx: Vec<usize>) {
    let n = v.len();
    for start in 0..n {
        let mut cur = start;
        while let Some(next) = idx.get_mut(cur).map(|x| std::mem::replace(x, cur)) {
            if next == start || next == cur || next >= n {
                break;
            }
            v.swap(cur, next);
            cur = next;
        }
    }
}

/// A stable sort of `v` by `cmp` (what `v.sort_by(cmp)` does).
pub(crate) fn sort_by<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let idx = {
        let v = &*v;
        order(v.len(), &|a, b| match (v.get(a), v.get(b)) {
            (Some(x), Some(y)) => cmp(x, y),
            _ => Ordering::Equal,
        })
    };
    permute(v, idx);
}

/// A stable sort of `v` by the key `f` gives each element (`v.sort_by_key(f)`).
pub(crate) fn sort_by_key<T, K: Ord>(v: &mut [T], f: impl Fn(&T) -> K) {
    sort_by(v, |a, b| f(a).cmp(&f(b)));
}

/// A sort of `v` in its natural order (`v.sort()`).
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// The pairs as a map, a later pair replacing an earlier one with an equal key (what
/// `collect::<BTreeMap<_, _>>()` gives), inserted one by one.
#[cfg_attr(not(feature = "composer"), allow(dead_code))]
pub(crate) fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut m = BTreeMap::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    m
}

/// The pairs as a sorted-vector map, a later pair replacing an earlier one with an equal
/// key, inserted one by one (no sort of its own).
#[cfg_attr(not(feature = "composer"), allow(dead_code))]
pub(crate) fn lite_of<K: Ord, V>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> litemap::LiteMap<K, V> {
    let mut m = litemap::LiteMap::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    m
}

/// The pairs as a JSON object ([`map_of`] for `collect::<serde_json::Map<_, _>>()`).
pub(crate) fn json_map_of(
    pairs: impl IntoIterator<Item = (String, serde_json::Value)>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    m
}

/// The items as a set (`collect::<BTreeSet<_>>()`), inserted one by one (the arbiter's
/// tool lists: the composer's build only).
#[cfg_attr(not(feature = "composer"), allow(dead_code))]
pub(crate) fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut s = BTreeSet::new();
    for x in items {
        s.insert(x);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pseudo-random list with many equal keys (to see stability).
    fn list(n: usize, seed: u32) -> Vec<(u8, usize)> {
        let mut s = seed;
        (0..n)
            .map(|i| {
                s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ((s >> 16) as u8 % 7, i)
            })
            .collect()
    }

    fn descending(a: &(u8, usize), b: &(u8, usize)) -> Ordering {
        b.0.cmp(&a.0)
    }

    #[test]
    fn sorts_as_the_standard_stable_sort_does() {
        for n in 0..70 {
            for seed in 0..20 {
                let v = list(n, seed);
                let mut want = v.clone();
                want.sort_by_key(|x| x.0);
                let mut got = v.clone();
                sort_by_key(&mut got, |x| x.0);
                assert_eq!(got, want, "n={n} seed={seed}");
                let mut got = v.clone();
                sort_by(&mut got, descending);
                let mut want = v.clone();
                want.sort_by(descending);
                assert_eq!(got, want, "reversed n={n} seed={seed}");
                let mut got = v.clone();
                sort(&mut got);
                let mut want = v;
                want.sort();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn collects_as_the_standard_collections_do() {
        for seed in 0..20 {
            let pairs: Vec<(u8, usize)> = list(50, seed);
            let want: BTreeMap<u8, usize> = pairs.iter().copied().collect();
            assert_eq!(map_of(pairs.iter().copied()), want);
            let json = |p: &(u8, usize)| (format!("k{}", p.0), serde_json::Value::from(p.1));
            let want: serde_json::Map<String, serde_json::Value> = pairs.iter().map(json).collect();
            assert_eq!(json_map_of(pairs.iter().map(json)), want);
            let want: BTreeSet<(u8, usize)> = pairs.iter().map(|p| (p.0, p.1 % 3)).collect();
            assert_eq!(set_of(pairs.iter().map(|p| (p.0, p.1 % 3))), want);
        }
    }
}
