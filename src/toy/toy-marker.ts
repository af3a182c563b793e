/** Everything the toy model writes carries this marker, so its output is never mistaken for a real model's. */
export const TOY_OUTPUT_MARKER = '(toy output)';
