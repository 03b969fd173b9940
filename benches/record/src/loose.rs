//! Lenient readers of a measurement's fields (see the crate's docs): each reads the field as a
//! `Value` first, so no field's type can fail the record, except a `chapter` or `impl` that is
//! missing or `null`.

use serde::de::{DeserializeOwned, Deserializer, Error};
use serde::Deserialize;
use serde_json::Value;

/// A value as text: strings as they are, `null` as nothing, lists joined by `x` (a shape),
/// anything else as its JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join("x"),
        other => other.to_string(),
    }
}

pub(crate) fn text_or_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(text(&Value::deserialize(d)?))
}

/// The text of a field the record cannot do without.
pub(crate) fn text_required<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Err(D::Error::custom("null where a name is needed")),
        v => Ok(text(&v)),
    }
}

/// A number, or a string that parses as one; anything else is `None`.
pub(crate) fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.as_f64().or_else(|| v.as_str()?.parse().ok()))
}

/// The field as its type, or the type's default when it has another.
pub(crate) fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(T::deserialize(Value::deserialize(d)?).unwrap_or_default())
}
