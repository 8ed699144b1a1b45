/**
 * Joining a LiveKit room: {@link connectRoom} with rtc-node (./room-rtc.ts, loaded only when
 * used), or the driver module the daemon's composition root named ({@link roomDriver}). Kept
 * apart from ./room.ts, which the drivers import, so that no driver imports the file that loads it.
 */
import type { RoomDriver } from './room.js';

/**
 * Joins the room `join` names with rtc-node against a real LiveKit server (./room-rtc.ts).
 * @throws RoomConnectError when the room cannot be joined within `join.connectTimeoutMs`
 */
export const connectRoom: RoomDriver = async (join) => {
  const { connectRtcRoom } = await import('./room-rtc.js');
  return connectRtcRoom(join);
};

/**
 * The room driver of a media process: {@link connectRoom}, or the `connectRoom` export of the
 * module at `moduleUrl` when the daemon's composition root named one (a development aid).
 * @throws Error when that module cannot be loaded or exports no `connectRoom` function
 */
export async function roomDriver(moduleUrl?: string): Promise<RoomDriver> {
  if (moduleUrl === undefined) return connectRoom;
  const mod = (await import(moduleUrl)) as { connectRoom?: unknown };
  if (typeof mod.connectRoom !== 'function') throw new Error(`${moduleUrl} exports no connectRoom room driver`);
  return mod.connectRoom as RoomDriver;
}
