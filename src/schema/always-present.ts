// Where the spec types a field as always present (a string, a number) but the stored column may be
// empty, the wire value of an empty column is decided here, once: text is "" and a number is 0, as
// the Rails-style service the REST clients were written against serialises them (`nil.to_s`,
// `nil.to_f`). The fields this applies to are listed in the docs/decisions.md ("Fields that are never null");
// their GraphQL types are non-null, so the OpenAPI document says the same.

/** A stored text the spec types as a string: "" when there is none. */
export function textOrEmpty(value: string | null | undefined): string {
  return value ?? '';
}

/** A stored number the spec types as a number: 0 when there is none. */
export function numberOrZero(value: number | null | undefined): number {
  return value ?? 0;
}
