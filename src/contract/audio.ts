/** `GET /v1/audio/{file}` (no API key: a capability URL): a clip's WAV bytes (docs/api-decisions.md "Audio URLs"). */
import { z } from 'zod';

/** `{file}` path parameters: the clip's file name, checked by the route. */
export const AudioParams = z.object({ file: z.string() });

/** The WAV body (not JSON). */
export const AudioFileSchema = z.any().meta({ description: 'audio/wav' });
