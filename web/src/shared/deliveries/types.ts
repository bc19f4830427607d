// The shapes of a delivery as the API gives them (the generated schema), for every part of the feature.
import type { Schemas } from '../api/types';

export type Package = Schemas['/api/packages/{id}']['get']['responses'][200]['content']['application/json'];
export type PackageStatus = Package['status'];
/** A page of the deliveries list. */
export type PackagePage = Schemas['/api/packages']['get']['responses'][200]['content']['application/json'];
