// Where the benchmark drivers are: ±30 km around Nairobi.
export const CENTRE = { lat: -1.2921, lng: 36.8219 };
export const SPREAD_DEG = 0.27;
