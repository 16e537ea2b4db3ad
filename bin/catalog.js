#!/usr/bin/env node
import { run, systemContext } from '../dist/cli/main.js';

process.exitCode = await run(process.argv, systemContext());
