//! The `input` of a request's context: the arguments as the request wrote them, typed by the
//! tool's Cedar type (CONTRACT Z2, Z5).
//!
//! Numbers are read from their text, never through a float: an integer must be a whole number
//! within `i64` (`1.0` and `1e2` are whole), a `decimal` must have at most four decimal places
//! once trailing zeros are dropped and lie within Cedar's decimal range. Anything else cannot be
//! held exactly and the call is refused (Z5), never rounded to something that passes.

use std::borrow::Cow;
use std::sync::LazyLock;

use cedar_policy::RestrictedExpression;

use super::schema::CedarType;

/// One JSON value as the request wrote it: what [`input_expression`] reads.
pub trait ArgumentText {
    /// A scalar's JSON text (a string with its quotes and escapes, a number as written,
    /// `true`, `false`, `null`); `None` for an array or object.
    fn scalar(&self) -> Option<Cow<'_, str>>;
    /// An array's items; `None` for anything else.
    fn items(&self) -> Option<Vec<&Self>>;
    /// An object's member `key` (`Ok(None)` when absent).
    ///
    /// # Errors
    /// [`NotAnObject`] when the value is no object.
    fn member(&self, key: &str) -> Result<Option<&Self>, NotAnObject>;
}

/// The value asked for a member is no object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the value is not an object")]
pub struct NotAnObject;

/// A parsed JSON value, for `mcp-manifest policy test`'s cases: a number is the text
/// `serde_json` writes for it (exact for whole numbers; a fraction as its shortest text), not
/// the text a request wrote, which the gateway reads instead (CONTRACT Z5).
impl ArgumentText for serde_json::Value {
    fn scalar(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Array(_) | Self::Object(_) => None,
            scalar => Some(Cow::Owned(scalar.to_string())),
        }
    }

    fn items(&self) -> Option<Vec<&Self>> {
        self.as_array().map(|items| items.iter().collect())
    }

    fn member(&self, key: &str) -> Result<Option<&Self>, NotAnObject> {
        self.as_object().map(|o| o.get(key)).ok_or(NotAnObject)
    }
}

/// Why an argument cannot become a Cedar value (CONTRACT Z5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// A number with more than four decimal places, or out of range.
    #[error("argument '{path}' is a number the policies cannot hold exactly")]
    Inexact {
        /// The argument's path, `/`-separated.
        path: String,
    },
    /// A value of another type than the schema's (not reached after X2's validation).
    #[error("argument '{path}' does not have the type its policies expect")]
    Mistyped {
        /// The argument's path.
        path: String,
    },
}

/// The `input` record of `arguments` for a tool whose Cedar input type is `ty`: properties
/// the type leaves out are not read (CONTRACT Z2).
///
/// # Errors
/// [`InputError`] for a number Cedar cannot hold exactly or a value of another type (Z5).
pub fn input_expression<A: ArgumentText>(
    ty: &CedarType,
    arguments: &A,
) -> Result<RestrictedExpression, InputError> {
    value(ty, arguments, &mut String::new())
}

fn value<A: ArgumentText>(
    ty: &CedarType,
    arg: &A,
    path: &mut String,
) -> Result<RestrictedExpression, InputError> {
    let mistyped = |path: &String| InputError::Mistyped { path: path.clone() };
    match ty {
        CedarType::Record(attributes) => {
            let mut fields = Vec::with_capacity(attributes.len());
            for attribute in attributes {
                let Some(member) = arg
                    .member(&attribute.name)
                    .map_err(|NotAnObject| mistyped(path))?
                else {
                    continue;
                };
                let len = path.len();
                path.push('/');
                path.push_str(&attribute.name);
                let field = value(&attribute.ty, member, path)?;
                path.truncate(len);
                fields.push((attribute.name.clone(), field));
            }
            RestrictedExpression::new_record(fields).map_err(|_| mistyped(path))
        }
        CedarType::Set(element) => {
            let items = arg.items().ok_or_else(|| mistyped(path))?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(value(element, item, path)?);
            }
            Ok(RestrictedExpression::new_set(out))
        }
        CedarType::String => {
            let text = arg.scalar().filter(|t| t.starts_with('"'));
            let text = text.ok_or_else(|| mistyped(path))?;
            let string: String = serde_json::from_str(&text).map_err(|_| mistyped(path))?;
            Ok(RestrictedExpression::new_string(string))
        }
        CedarType::Boolean => match arg.scalar().as_deref() {
            Some("true") => Ok(RestrictedExpression::new_bool(true)),
            Some("false") => Ok(RestrictedExpression::new_bool(false)),
            _ => Err(mistyped(path)),
        },
        CedarType::Long | CedarType::Decimal => {
            let text = arg.scalar().ok_or_else(|| mistyped(path))?;
            let number = ExactNumber::parse(&text).ok_or_else(|| mistyped(path))?;
            let inexact = || InputError::Inexact { path: path.clone() };
            if *ty == CedarType::Long {
                number
                    .long()
                    .map(RestrictedExpression::new_long)
                    .ok_or_else(inexact)
            } else {
                let text = number.decimal().ok_or_else(inexact)?;
                Ok(decimal(text))
            }
        }
    }
}

/// The name of Cedar's `decimal` constructor, parsed once.
static DECIMAL: LazyLock<cedar_policy_core::ast::Name> = LazyLock::new(|| {
    cedar_policy_core::ast::Name::parse_unqualified_name("decimal")
        .expect("`decimal` is a valid Cedar name")
});

/// The Cedar value `decimal("<text>")`, what `RestrictedExpression::new_decimal(text)` makes,
/// without that function's parse of the name `decimal` with Cedar's grammar (a lexer and its
/// DFA built on every call: about a third of a decision with one decimal argument). Through
/// Cedar's AST, whose conversion to the public type cedar-policy keeps public but undocumented;
/// `cedar-policy-core` is pinned to the version cedar-policy uses, and a test compares the two.
fn decimal(text: String) -> RestrictedExpression {
    use cedar_policy_core::ast::RestrictedExpr;
    RestrictedExpression::from(RestrictedExpr::call_extension_fn(
        DECIMAL.clone(),
        [RestrictedExpr::val(text)],
    ))
}

/// The most digits a number's text may have before it is judged: more can never fit.
const MAX_DIGITS: usize = 64;
/// Cedar's decimal: an `i64` count of ten-thousandths.
const DECIMAL_PLACES: usize = 4;

/// A JSON number as an exact decimal: `digits × 10^exponent`, `digits` without leading or
/// trailing zeros (empty for zero).
#[derive(Debug, PartialEq, Eq)]
struct ExactNumber {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl ExactNumber {
    /// Reads a JSON number's text; `None` for text that is no JSON number or has too many
    /// digits or too large an exponent to fit anything.
    fn parse(text: &str) -> Option<Self> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty()
            || !all(whole)
            || !all(fraction)
            || whole.len() + fraction.len() > MAX_DIGITS
        {
            return None;
        }
        if !(-1000..=1000).contains(&exponent) {
            return None;
        }
        let mut digits: String = whole.chars().chain(fraction.chars()).collect();
        let mut exponent = exponent - i64::try_from(fraction.len()).ok()?;
        let trimmed = digits.trim_start_matches('0').len();
        digits.drain(..digits.len() - trimmed);
        while digits.ends_with('0') {
            digits.pop();
            exponent += 1;
        }
        if digits.is_empty() {
            exponent = 0;
        }
        Some(Self {
            negative: negative && !digits.is_empty(),
            digits,
            exponent,
        })
    }

    /// The value as a whole number of `10^-places`, when it is one and fits `i128`.
    fn scaled(&self, places: usize) -> Option<i128> {
        let shift = self.exponent + i64::try_from(places).ok()?;
        if shift < 0 || self.digits.len() + usize::try_from(shift).ok()? > 38 {
            return None;
        }
        let mut value: i128 = if self.digits.is_empty() {
            0
        } else {
            self.digits.parse().ok()?
        };
        for _ in 0..shift {
            value = value.checked_mul(10)?;
        }
        Some(if self.negative { -value } else { value })
    }

    /// The value as a `Long`: a whole number within `i64`.
    fn long(&self) -> Option<i64> {
        i64::try_from(self.scaled(0)?).ok()
    }

    /// The value as the text of Cedar's `decimal()`: at most four decimal places, within
    /// `i64` ten-thousandths.
    fn decimal(&self) -> Option<String> {
        let scaled = i64::try_from(self.scaled(DECIMAL_PLACES)?).ok()?;
        let sign = if scaled < 0 { "-" } else { "" };
        let magnitude = scaled.unsigned_abs();
        Some(format!(
            "{sign}{}.{:04}",
            magnitude / 10_000,
            magnitude % 10_000
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z2_a_decimal_is_the_value_cedars_own_constructor_makes() {
        use cedar_policy_core::ast::RestrictedExpr;
        for text in ["0.0", "12.5", "-922337203685477.5808", "500.0001"] {
            let ours = decimal(text.to_string());
            let cedars = RestrictedExpression::new_decimal(text);
            let (ours, cedars): (&RestrictedExpr, &RestrictedExpr) =
                (ours.as_ref(), cedars.as_ref());
            assert_eq!(ours, cedars, "{text}");
        }
    }

    #[test]
    fn z5_numbers_are_read_exactly_from_their_text() {
        let long = |t: &str| ExactNumber::parse(t).and_then(|n| n.long());
        let decimal = |t: &str| ExactNumber::parse(t).and_then(|n| n.decimal());
        assert_eq!(long("42"), Some(42));
        assert_eq!(long("1.0"), Some(1));
        assert_eq!(long("1e2"), Some(100));
        assert_eq!(long("-0"), Some(0));
        assert_eq!(long("9223372036854775807"), Some(i64::MAX));
        assert_eq!(long("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(long("9223372036854775808"), None);
        assert_eq!(long("12345678901234567890123"), None);
        assert_eq!(long("1.5"), None);
        assert_eq!(decimal("500"), Some("500.0000".into()));
        assert_eq!(decimal("0.1234"), Some("0.1234".into()));
        assert_eq!(decimal("0.12340000"), Some("0.1234".into()));
        assert_eq!(decimal("-1.5e-3"), Some("-0.0015".into()));
        assert_eq!(decimal("0.12345"), None);
        assert_eq!(decimal("0.30000000000000001"), None);
        assert_eq!(
            decimal("922337203685477.5807"),
            Some("922337203685477.5807".into())
        );
        assert_eq!(decimal("922337203685477.5808"), None);
        assert_eq!(
            decimal("-922337203685477.5808"),
            Some("-922337203685477.5808".into())
        );
        assert_eq!(decimal("1e400"), None);
        assert_eq!(decimal("1e-400"), None);
        assert_eq!(decimal("0e-400"), Some("0.0000".into()));
    }
}
