//! Column values of user profiles by CQL type, following cassandra-stress:
//! a value is a pure function of the column's *identity* (drawn from its
//! `population`) and, for text, blob and collections, a *size* (drawn from its
//! `size`; for a collection the size is its element count, as c-s's `Lists`
//! and `Sets` generators do). Elements of collections, fields of user types
//! and tuple components get c-s's column defaults: size `uniform(4..8)`,
//! population `uniform(1..100B)`.

use crate::generator::{hash3, mix64, BytePool, Rng};
use scylla::cluster::metadata::{CollectionType, ColumnType, NativeType};
use scylla::value::{
    Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue,
    CqlVarint,
};
use std::net::{IpAddr, Ipv4Addr};

/// Largest collection a profile's `size` may ask for (elements).
pub const MAX_ELEMENTS: usize = 10_000;
/// c-s's default population of nested values: `uniform(1..100B)`.
const NESTED_POPULATION: u64 = 100_000_000_000;
const NANOS_PER_DAY: u64 = 86_400_000_000_000;
/// `CqlDate` counts days from 2^31 days before the epoch.
const DATE_EPOCH: u32 = 1 << 31;

/// A CQL type casslab-load generates values for.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// `text`/`varchar`.
    Text,
    /// `ascii`.
    Ascii,
    /// `blob`.
    Blob,
    /// `int`.
    Int,
    /// `bigint`.
    BigInt,
    /// `smallint`.
    SmallInt,
    /// `tinyint`.
    TinyInt,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `boolean`.
    Boolean,
    /// `timestamp`.
    Timestamp,
    /// `date`.
    Date,
    /// `time`.
    Time,
    /// `uuid`.
    Uuid,
    /// `timeuuid`.
    Timeuuid,
    /// `inet` (IPv4, from the identity's low 32 bits as c-s's `Inets`).
    Inet,
    /// `varint`.
    Varint,
    /// `decimal`.
    Decimal,
    /// `duration`.
    Duration,
    /// `counter`: the value is the increment.
    Counter,
    /// `list<T>`.
    List(Box<Ty>),
    /// `set<T>`.
    Set(Box<Ty>),
    /// `map<K, V>`.
    Map(Box<Ty>, Box<Ty>),
    /// `tuple<...>`.
    Tuple(Vec<Ty>),
    /// `vector<T, n>`.
    Vector(Box<Ty>, usize),
    /// A user-defined type.
    Udt {
        /// Keyspace of the type.
        keyspace: String,
        /// Type name.
        name: String,
        /// Field names and types.
        fields: Vec<(String, Ty)>,
    },
}

fn native(n: &NativeType) -> Option<Ty> {
    Some(match n {
        NativeType::Text => Ty::Text,
        NativeType::Ascii => Ty::Ascii,
        NativeType::Blob => Ty::Blob,
        NativeType::Int => Ty::Int,
        NativeType::BigInt => Ty::BigInt,
        NativeType::SmallInt => Ty::SmallInt,
        NativeType::TinyInt => Ty::TinyInt,
        NativeType::Float => Ty::Float,
        NativeType::Double => Ty::Double,
        NativeType::Boolean => Ty::Boolean,
        NativeType::Timestamp => Ty::Timestamp,
        NativeType::Date => Ty::Date,
        NativeType::Time => Ty::Time,
        NativeType::Uuid => Ty::Uuid,
        NativeType::Timeuuid => Ty::Timeuuid,
        NativeType::Inet => Ty::Inet,
        NativeType::Varint => Ty::Varint,
        NativeType::Decimal => Ty::Decimal,
        NativeType::Duration => Ty::Duration,
        NativeType::Counter => Ty::Counter,
        _ => return None,
    })
}

impl Ty {
    /// The generated type of a column type from cluster metadata; `None` for a
    /// type this driver version knows but casslab-load has no generator for.
    pub fn of(t: &ColumnType) -> Option<Ty> {
        Some(match t {
            ColumnType::Native(n) => native(n)?,
            ColumnType::Collection { typ, .. } => match typ {
                CollectionType::List(e) => Ty::List(Box::new(Ty::of(e)?)),
                CollectionType::Set(e) => Ty::Set(Box::new(Ty::of(e)?)),
                CollectionType::Map(k, v) => Ty::Map(Box::new(Ty::of(k)?), Box::new(Ty::of(v)?)),
                _ => return None,
            },
            ColumnType::Tuple(items) => {
                Ty::Tuple(items.iter().map(Ty::of).collect::<Option<Vec<_>>>()?)
            }
            ColumnType::Vector { typ, dimensions } => {
                Ty::Vector(Box::new(Ty::of(typ)?), usize::from(*dimensions))
            }
            ColumnType::UserDefinedType { definition, .. } => Ty::Udt {
                keyspace: definition.keyspace.to_string(),
                name: definition.name.to_string(),
                fields: definition
                    .field_types
                    .iter()
                    .map(|(n, t)| Some((n.to_string(), Ty::of(t)?)))
                    .collect::<Option<Vec<_>>>()?,
            },
            _ => return None,
        })
    }

    /// True for `list`, `set` and `map`, whose `size` is an element count.
    pub fn is_collection(&self) -> bool {
        matches!(self, Ty::List(_) | Ty::Set(_) | Ty::Map(..))
    }
}

/// Identity and size of nested value `i` of the value hashed `h`, drawn from
/// c-s's defaults (population `uniform(1..100B)`, size `uniform(4..8)`).
fn nested(h: u64, i: u64) -> (u64, usize, u64) {
    let eh = hash3(h, i, 0x4E45_5354);
    let mut r = Rng::new(eh, 0);
    let id = 1 + r.below(NESTED_POPULATION);
    let size = 4 + r.below(5) as usize;
    (id, size, eh)
}

fn nested_values(ty: &Ty, n: usize, h: u64, stream: u64, pool: &BytePool) -> Vec<CqlValue> {
    (0..n as u64)
        .map(|i| {
            let (id, size, eh) = nested(h ^ stream, i);
            value(ty, id, size, eh, pool)
        })
        .collect()
}

fn uuid_bytes(h: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&h.to_be_bytes());
    b[8..].copy_from_slice(&mix64(h).to_be_bytes());
    b
}

/// The value of type `ty` for identity `id`, size `size` (characters, bytes or
/// elements) and value hash `h` (which picks text/blob bytes and UUIDs).
pub fn value(ty: &Ty, id: u64, size: usize, h: u64, pool: &BytePool) -> CqlValue {
    match ty {
        Ty::Text => CqlValue::Text(pool.str(h, size).to_string()),
        Ty::Ascii => CqlValue::Ascii(pool.str(h, size).to_string()),
        Ty::Blob => CqlValue::Blob(pool.slice(h, size).to_vec()),
        Ty::Int => CqlValue::Int(id as i32),
        Ty::BigInt => CqlValue::BigInt(id as i64),
        Ty::SmallInt => CqlValue::SmallInt(id as i16),
        Ty::TinyInt => CqlValue::TinyInt(id as i8),
        Ty::Float => CqlValue::Float(id as f32 / 7.0),
        Ty::Double => CqlValue::Double(id as f64 / 7.0),
        Ty::Boolean => CqlValue::Boolean(id.is_multiple_of(2)),
        Ty::Timestamp => {
            CqlValue::Timestamp(CqlTimestamp(1_600_000_000_000 + (id % (1 << 40)) as i64))
        }
        // Days after the epoch, wrapped within ~270 years so every identity is a valid date.
        Ty::Date => CqlValue::Date(CqlDate(DATE_EPOCH + (id % 100_000) as u32)),
        Ty::Time => CqlValue::Time(CqlTime((id % NANOS_PER_DAY) as i64)),
        Ty::Uuid => CqlValue::Uuid(uuid::Builder::from_random_bytes(uuid_bytes(h)).into_uuid()),
        Ty::Timeuuid => {
            let mut b = uuid_bytes(h);
            b[6] = (b[6] & 0x0f) | 0x10; // version 1
            b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
            CqlValue::Timeuuid(CqlTimeuuid::from_bytes(b))
        }
        Ty::Inet => CqlValue::Inet(IpAddr::V4(Ipv4Addr::from(id as u32))),
        Ty::Varint => CqlValue::Varint(CqlVarint::from_signed_bytes_be(
            (id as i64).to_be_bytes().to_vec(),
        )),
        Ty::Decimal => CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
            (id as i64).to_be_bytes().to_vec(),
            2,
        )),
        Ty::Duration => CqlValue::Duration(CqlDuration {
            months: 0,
            days: 0,
            nanoseconds: (id % (1 << 62)) as i64,
        }),
        Ty::Counter => CqlValue::Counter(Counter(id as i64)),
        Ty::List(e) => CqlValue::List(nested_values(e, size, h, 0x4C, pool)),
        Ty::Set(e) => CqlValue::Set(nested_values(e, size, h, 0x53, pool)),
        Ty::Map(k, v) => CqlValue::Map(
            nested_values(k, size, h, 0x4B, pool)
                .into_iter()
                .zip(nested_values(v, size, h, 0x56, pool))
                .collect(),
        ),
        Ty::Vector(e, n) => CqlValue::Vector(nested_values(e, *n, h, 0x56_45, pool)),
        Ty::Tuple(items) => CqlValue::Tuple(
            items
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let (id, size, eh) = nested(h ^ 0x54, i as u64);
                    Some(value(t, id, size, eh, pool))
                })
                .collect(),
        ),
        Ty::Udt {
            keyspace,
            name,
            fields,
        } => CqlValue::UserDefinedType {
            keyspace: keyspace.clone(),
            name: name.clone(),
            fields: fields
                .iter()
                .enumerate()
                .map(|(i, (f, t))| {
                    let (id, size, eh) = nested(h ^ 0x55, i as u64);
                    (f.clone(), Some(value(t, id, size, eh, pool)))
                })
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> BytePool {
        BytePool::new(7, 1 << 12)
    }

    #[test]
    fn scalars_follow_the_identity() {
        let p = pool();
        assert_eq!(value(&Ty::Int, 42, 5, 1, &p), CqlValue::Int(42));
        assert_eq!(value(&Ty::BigInt, 42, 5, 1, &p), CqlValue::BigInt(42));
        assert_eq!(
            value(&Ty::Counter, 3, 5, 1, &p),
            CqlValue::Counter(Counter(3))
        );
        assert_eq!(
            value(&Ty::Inet, 0x0A00_0102, 5, 1, &p),
            CqlValue::Inet(IpAddr::V4(Ipv4Addr::new(10, 0, 1, 2)))
        );
        assert_eq!(
            value(&Ty::Date, 1, 5, 1, &p),
            CqlValue::Date(CqlDate(DATE_EPOCH + 1))
        );
        // Every identity gives a time within the day and a date the server accepts.
        for id in [0, NANOS_PER_DAY, u64::MAX] {
            let CqlValue::Time(CqlTime(t)) = value(&Ty::Time, id, 5, 1, &p) else {
                panic!("not a time")
            };
            assert!((0..NANOS_PER_DAY as i64).contains(&t));
        }
    }

    #[test]
    fn text_and_blob_take_the_size() {
        let p = pool();
        let CqlValue::Text(s) = value(&Ty::Text, 1, 9, 77, &p) else {
            panic!("not text")
        };
        assert_eq!(s.len(), 9);
        assert_eq!(value(&Ty::Text, 1, 9, 77, &p), CqlValue::Text(s));
        let CqlValue::Blob(b) = value(&Ty::Blob, 1, 13, 77, &p) else {
            panic!("not a blob")
        };
        assert_eq!(b.len(), 13);
    }

    #[test]
    fn collections_have_size_elements_with_default_nested_sizes() {
        let p = pool();
        let CqlValue::List(l) = value(&Ty::List(Box::new(Ty::Text)), 1, 6, 5, &p) else {
            panic!("not a list")
        };
        assert_eq!(l.len(), 6);
        for e in &l {
            let CqlValue::Text(s) = e else {
                panic!("not text")
            };
            assert!((4..=8).contains(&s.len()), "{s:?}");
        }
        let CqlValue::Map(m) = value(&Ty::Map(Box::new(Ty::Int), Box::new(Ty::Inet)), 1, 3, 5, &p)
        else {
            panic!("not a map")
        };
        assert_eq!(m.len(), 3);
        assert!(matches!(m[0], (CqlValue::Int(_), CqlValue::Inet(_))));
        let CqlValue::Set(s) = value(&Ty::Set(Box::new(Ty::Uuid)), 1, 4, 5, &p) else {
            panic!("not a set")
        };
        assert_eq!(s.len(), 4);
        // Different value hashes give different elements.
        assert_ne!(
            value(&Ty::Set(Box::new(Ty::Uuid)), 1, 4, 6, &p),
            CqlValue::Set(s)
        );
    }

    #[test]
    fn user_types_and_tuples_fill_every_field() {
        let p = pool();
        let udt = Ty::Udt {
            keyspace: "ks".into(),
            name: "addr".into(),
            fields: vec![("street".into(), Ty::Text), ("zip".into(), Ty::Int)],
        };
        let CqlValue::UserDefinedType { name, fields, .. } = value(&udt, 1, 5, 9, &p) else {
            panic!("not a udt")
        };
        assert_eq!(name, "addr");
        assert_eq!(fields.len(), 2);
        assert!(matches!(fields[0], (ref n, Some(CqlValue::Text(_))) if n == "street"));
        assert!(matches!(fields[1], (_, Some(CqlValue::Int(_)))));
        let CqlValue::Tuple(t) = value(&Ty::Tuple(vec![Ty::Boolean, Ty::Date]), 1, 5, 9, &p) else {
            panic!("not a tuple")
        };
        assert!(matches!(
            t[..],
            [Some(CqlValue::Boolean(_)), Some(CqlValue::Date(_))]
        ));
    }

    #[test]
    fn metadata_types_map_to_generators() {
        let list = ColumnType::Collection {
            frozen: false,
            typ: CollectionType::List(Box::new(ColumnType::Native(NativeType::Inet))),
        };
        assert_eq!(Ty::of(&list), Some(Ty::List(Box::new(Ty::Inet))));
        assert!(Ty::of(&list).unwrap().is_collection());
        assert_eq!(
            Ty::of(&ColumnType::Native(NativeType::Counter)),
            Some(Ty::Counter)
        );
    }
}
