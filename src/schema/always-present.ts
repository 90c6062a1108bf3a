// An empty column of a field the spec types as always present answers "" or 0, as Rails serialises nil.

export function textOrEmpty(value: string | null | undefined): string {
  return value ?? '';
}

export function numberOrZero(value: number | null | undefined): number {
  return value ?? 0;
}
