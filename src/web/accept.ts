// Which media types a request's Accept admits.

/** Yoga's own reading of Accept (its result-processor/accept.js), which it applies only after running. */
export function acceptsAny(accept: string | null, offers: readonly string[]): boolean {
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',');
  return asked.some((entry) => {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') return false;
    const [type, subtype] = mediaType.split('/');
    return offers.some((offered) => {
      const [offeredType, offeredSubtype] = offered.split('/');
      return (type === '*' || type === offeredType) && (subtype === '*' || subtype === offeredSubtype);
    });
  });
}
