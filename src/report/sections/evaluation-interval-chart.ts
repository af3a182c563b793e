/**
 * A value with its interval per category (`y`) and series (`colour`), and a dashed line at `reference`: the
 * evaluation's win rates, grades and delegation rates.
 */
export function intervalChartSpec(options: {
  y: string;
  x: string;
  xTitle: string;
  colour: string;
  domain?: [number, number];
  reference?: number;
}) {
  const scale = options.domain ? { domain: options.domain } : { zero: false };
  // Each layer of the data carries the categories itself: the reference line's layer has other data.
  const categories = {
    y: { field: options.y, type: 'nominal', sort: null, title: null },
    yOffset: { field: options.colour, type: 'nominal' },
    color: { field: options.colour, type: 'nominal' },
  };
  const layer: unknown[] = [
    {
      transform: [{ filter: 'datum.lower !== null' }],
      mark: { type: 'rule', strokeWidth: 2 },
      encoding: {
        ...categories,
        x: { field: 'lower', type: 'quantitative', scale, title: options.xTitle },
        x2: { field: 'upper' },
      },
    },
    {
      mark: { type: 'point', filled: true, size: 70 },
      encoding: {
        ...categories,
        x: { field: options.x, type: 'quantitative', scale, title: options.xTitle },
      },
    },
  ];
  if (options.reference !== undefined) {
    layer.push({
      data: { values: [{ at: options.reference }] },
      mark: { type: 'rule', strokeDash: [4, 4], color: '#5f6b7a' },
      encoding: { x: { field: 'at', type: 'quantitative' } },
    });
  }
  return { width: 420, layer };
}
