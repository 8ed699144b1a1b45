/**
 * `GET /v1/audio/{sha256}.wav` (DESIGN.md §4 "Extensions"): a cached clip as a 48 kHz mono
 * PCM16 WAV. The URL is a capability (an unguessable content hash), so it needs no API key:
 * a media server or a browser can fetch it as is.
 */
import fs from 'node:fs';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApiError } from '../../../domain/errors.js';
import type { SpeechPort } from '../../../services/speech-port.js';
import { errorResponses } from '../../schemas.js';

/** Registers the audio route (outside the authenticated scope). */
export function audioRoutes(speech: SpeechPort): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/audio/:file', {
      schema: {
        summary: 'A synthesised clip (48 kHz mono PCM16 WAV); no auth: the hash is the capability',
        tags: ['audio'], security: [], params: z.object({ file: z.string() }),
        response: { 200: z.any().meta({ description: 'audio/wav' }), ...errorResponses },
      },
    }, async (request, reply) => {
      const name = request.params.file;
      // fileOf returns null for anything but a cached clip's 64-hex key (SpeechPort.fileOf)
      const file = name.endsWith('.wav') ? speech.fileOf(name.slice(0, -'.wav'.length)) : null;
      if (!file) throw new ApiError('not_found', 'no such audio clip', { param: 'file' });
      let stat: fs.Stats;
      try {
        stat = await fs.promises.stat(file);
      } catch {
        throw new ApiError('not_found', 'no such audio clip', { param: 'file' });
      }
      return reply
        .header('content-type', 'audio/wav')
        .header('content-length', stat.size)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .send(fs.createReadStream(file));
    });
  };
}
