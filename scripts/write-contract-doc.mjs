// Rewrites the telemetry-contract section of docs/contract.md from the tables in contract/ (run after a build).
import { readFileSync, writeFileSync } from 'node:fs';
import { DOC_BEGIN, DOC_END, renderContract } from '../dist/contract/index.js';

const path = new URL('../docs/contract.md', import.meta.url);
const readme = readFileSync(path, 'utf8');
const begin = readme.indexOf(DOC_BEGIN);
const end = readme.indexOf(DOC_END);
if (begin < 0 || end < begin) throw new Error('docs/contract.md has no contract section markers');
writeFileSync(path, readme.slice(0, begin) + renderContract() + readme.slice(end + DOC_END.length));
