/**
 * Joins a LiveKit room with the driver its {@link RoomJoin} names (./room.ts): `rtc`
 * (./room-rtc.ts) or `fake` (./room-fake.ts), each loaded only when used. Kept apart from
 * ./room.ts, which both drivers import, so that no driver imports the file that loads it.
 */
import type { RoomConnection, RoomJoin } from './room.js';

/**
 * Joins the room `join` names with its driver.
 * @throws RoomConnectError when the room cannot be joined within `join.connectTimeoutMs`
 */
export async function connectRoom(join: RoomJoin): Promise<RoomConnection> {
  if (join.driver === 'fake') {
    const { connectFakeRoom } = await import('./room-fake.js');
    return connectFakeRoom(join);
  }
  const { connectRtcRoom } = await import('./room-rtc.js');
  return connectRtcRoom(join);
}
