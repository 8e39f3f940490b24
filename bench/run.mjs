// Runs every benchmark; each reports its figures as a ratio to a baseline measured in the same run.
import { benchSurfaces } from './surfaces.mjs';

await benchSurfaces();
