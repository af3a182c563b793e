import path from 'node:path';

import { exportFp8 } from '../../train/fp8-export.js';

export async function exportAction(options: {
  fp8: true;
  src: string;
  out: string;
  like?: string;
  probe?: string;
  python?: string;
}): Promise<void> {
  const report = await exportFp8({
    src: options.src,
    out: options.out,
    ...(options.like ? { like: options.like } : {}),
    ...(options.probe ? { probe: options.probe } : {}),
    ...(options.python ? { python: options.python } : {}),
    logFile: path.join(options.out, 'fp8-export.log'),
  });
  console.log(
    `mass export: ${options.out}: ${report.quantised} weights in FP8 (${report.block}×${report.block} blocks, ` +
      `${report.scaleDtype} scales), ${report.kept} tensors kept; read back within ` +
      `${(report.maxErrorOverBound * 100).toFixed(0)} % of e4m3's rounding bound, relative error at most ` +
      `${report.maxRelativeError.toExponential(2)}` +
      (options.like ? `; the layout matches ${options.like} tensor by tensor` : ''),
  );
}
