import { describeLimits } from './sandbox-limits-cases.js';

describeLimits('unsandboxed');
