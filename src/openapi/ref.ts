/** A reference to a named entry of the document's `components` (schemas, parameters, headers, responses). */
export const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
