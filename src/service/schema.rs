//! Tool schemas as every JSON Schema validator reads them. schemars marks number widths
//! with `format` values JSON Schema does not define (`uint64`, `uint`, `int32`,
//! `double`, ...); a strict validator — ajv in the official TypeScript SDK, which most
//! clients are built on — warns on each one at every `tools/list`. They are dropped here,
//! once, where the registry builds its schemas; an unsigned integer keeps its meaning as
//! `minimum: 0`.

use schemars::transform::{transform_subschemas, Transform};
use schemars::Schema;
use serde_json::Value;

/// The `format` values JSON Schema 2020-12 defines (Validation, §7.3).
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops every `format` JSON Schema does not define, in a schema and all its subschemas.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandardFormats;

impl Transform for StandardFormats {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(obj) = schema.as_object_mut() {
            let nonstandard = match obj.get("format") {
                Some(Value::String(f)) => {
                    (!STANDARD_FORMATS.contains(&f.as_str())).then(|| f.starts_with("uint"))
                }
                _ => None,
            };
            if let Some(unsigned) = nonstandard {
                obj.remove("format");
                if unsigned && !obj.contains_key("minimum") && !obj.contains_key("exclusiveMinimum")
                {
                    obj.insert("minimum".into(), Value::from(0));
                }
            }
        }
        transform_subschemas(self, schema);
    }
}

/// A generated schema, standard formats only, as the JSON object MCP publishes.
pub fn publish(mut schema: Schema) -> serde_json::Map<String, Value> {
    StandardFormats.transform(&mut schema);
    match schema.to_value() {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{json, Map};

    use super::*;

    /// The keywords of the JSON Schema 2020-12 vocabularies (core, applicator,
    /// unevaluated, validation, format-annotation, content, meta-data): a strict validator
    /// refuses any other.
    const KEYWORDS: &[&str] = &[
        "$schema",
        "$id",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "prefixItems",
        "items",
        "contains",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
    ];

    /// Every keyword of every (sub)schema, and every `format`, is a standard one.
    fn strict_walk(name: &str, at: &str, v: &Value, bad: &mut Vec<String>) {
        let Value::Object(obj) = v else { return };
        for (k, sub) in obj {
            let here = format!("{at}/{k}");
            if !KEYWORDS.contains(&k.as_str()) {
                bad.push(format!("{name}: unknown keyword at {here}"));
            }
            match k.as_str() {
                "format" if !sub.as_str().is_some_and(|f| STANDARD_FORMATS.contains(&f)) => {
                    bad.push(format!("{name}: format {sub} at {here}"));
                }
                "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                    for (p, s) in sub.as_object().into_iter().flatten() {
                        strict_walk(name, &format!("{here}/{p}"), s, bad);
                    }
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                    for (i, s) in sub.as_array().into_iter().flatten().enumerate() {
                        strict_walk(name, &format!("{here}/{i}"), s, bad);
                    }
                }
                "not"
                | "if"
                | "then"
                | "else"
                | "items"
                | "contains"
                | "additionalProperties"
                | "propertyNames"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "contentSchema" => strict_walk(name, &here, sub, bad),
                _ => {}
            }
        }
    }

    pub(crate) fn check(name: &str, schema: &Map<String, Value>, bad: &mut Vec<String>) {
        let v = Value::Object(schema.clone());
        if let Err(e) = jsonschema::draft202012::meta::validate(&v) {
            bad.push(format!("{name}: not a valid 2020-12 schema: {e}"));
        }
        if let Err(e) = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(&v)
        {
            bad.push(format!("{name}: refused by a strict validator: {e}"));
        }
        strict_walk(name, "#", &v, bad);
    }

    #[test]
    fn widths_become_bounds() {
        let schema: Schema = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "n": { "type": "integer", "format": "uint64", "minimum": 0 },
                "u": { "type": ["integer", "null"], "format": "uint" },
                "f": { "type": "number", "format": "double" },
                "when": { "type": "string", "format": "date-time" },
                "format": { "type": "string" }
            },
            "$defs": { "D": { "type": "integer", "format": "int32" } }
        }))
        .unwrap();
        let out = Value::Object(publish(schema));
        assert_eq!(
            out["properties"]["n"],
            json!({ "type": "integer", "minimum": 0 })
        );
        assert_eq!(
            out["properties"]["u"],
            json!({ "type": ["integer", "null"], "minimum": 0 })
        );
        assert_eq!(out["properties"]["f"], json!({ "type": "number" }));
        assert_eq!(out["properties"]["when"]["format"], "date-time");
        assert_eq!(
            out["properties"]["format"],
            json!({ "type": "string" }),
            "a property named format is not a keyword"
        );
        assert_eq!(out["$defs"]["D"], json!({ "type": "integer" }));
    }
}
