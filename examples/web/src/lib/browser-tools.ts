/** The demo's browser-executed tools, run with real browser APIs. */

export interface LocationResult {
  latitude: number;
  longitude: number;
  accuracy: number;
}

/** `get_location`: the Geolocation API (the browser asks the user for permission). */
export function getLocation(timeoutMs = 10_000): Promise<LocationResult> {
  return new Promise((resolve, reject) => {
    if (!('geolocation' in navigator)) {
      reject(new Error('This browser has no geolocation.'));
      return;
    }
    navigator.geolocation.getCurrentPosition(
      position =>
        resolve({
          latitude: Number(position.coords.latitude.toFixed(4)),
          longitude: Number(position.coords.longitude.toFixed(4)),
          accuracy: Math.round(position.coords.accuracy),
        }),
      error => reject(new Error(error.message || 'The location is not available.')),
      { timeout: timeoutMs, maximumAge: 60_000 },
    );
  });
}
