/**
 * `GET /v1/audio/{name}.wav` (docs/api-decisions.md "Audio URLs"): a cached clip as a 48 kHz mono
 * PCM16 WAV. The URL is a capability, so it needs no API key (a media server or a browser can
 * fetch it as is): `name` is HMAC-SHA256 of the clip's cache key under the install's secret
 * (`<state-dir>/audio.key`), so knowing or guessing what was said does not give the URL, and
 * the plain SHA-256 of engine, voice and text is not served. A dynamic clip (synthesised live)
 * may be evicted once the cache's cap is reached and `audio_url_keep_hours` have passed since
 * its last use; its name then answers 404 `not_found`.
 */
import fs from 'node:fs';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../../domain/errors.js';
import type { SpeechPort } from '../../../app/speech-port.js';
import { AudioFileSchema, AudioParams, errorResponses } from '../../../contract/index.js';

/** Registers the audio route (outside the authenticated scope). */
export function audioRoutes(speech: SpeechPort): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/audio/:file',
      {
        schema: {
          summary:
            'A synthesised clip (48 kHz mono PCM16 WAV); no auth: the name, a keyed MAC only this install can compute, is the capability',
          tags: ['audio'],
          security: [],
          params: AudioParams,
          response: { 200: AudioFileSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const name = request.params.file;
        // fileOf returns null for anything but the public name of a cached clip (SpeechPort.fileOf);
        // an evicted dynamic clip is no longer cached. The file is opened once:
        // a clip promoted from dynamic to static meanwhile moved, so its new place is looked up again.
        let handle: fs.promises.FileHandle | null = null;
        for (let attempt = 0; attempt < 2 && handle === null; attempt++) {
          const file = name.endsWith('.wav') ? speech.fileOf(name.slice(0, -'.wav'.length)) : null;
          if (!file) break;
          try {
            handle = await fs.promises.open(file, 'r');
          } catch {
            handle = null;
          }
        }
        if (!handle) throw new ApiError('not_found', 'no such audio clip', { param: 'file' });
        let size: number;
        try {
          size = (await handle.stat()).size;
        } catch {
          await handle.close();
          throw new ApiError('not_found', 'no such audio clip', { param: 'file' });
        }
        return reply
          .header('content-type', 'audio/wav')
          .header('content-length', size)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .send(handle.createReadStream());
      },
    );
  };
}
