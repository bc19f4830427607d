// A company's assignment of a pending delivery to one of its drivers, from the list's row (the API
// shows it a pending delivery there only, without the contacts' phones: contract section 9).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../shared/api/client';
import { queryKeys } from '../../shared/query-keys';
import { BusyButton, ErrorBox, SelectField } from '../../shared/ui';

export function AssignDriver({
  id,
  name,
  onAssigned,
}: {
  id: string;
  name: string;
  onAssigned: (driver: string) => void;
}) {
  const client = useQueryClient();
  const drivers = useQuery({
    queryKey: queryKeys.companyDrivers,
    queryFn: () => ok(api.GET('/api/companies/me/drivers', { params: { query: { limit: 100 } } })),
  });
  const [driverId, setDriverId] = useState('');
  const assign = useMutation({
    mutationFn: () => ok(api.POST('/api/packages/{id}/assign', { params: { path: { id } }, body: { driverId } })),
    onSuccess: (p) => {
      const driver = drivers.data?.items.find((d) => d.id === driverId);
      onAssigned(driver ? `${driver.firstName} ${driver.lastName}` : 'the driver');
      client.setQueryData(queryKeys.package(id), p);
      void client.invalidateQueries({ queryKey: queryKeys.packages });
    },
  });
  return (
    <form
      className="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        assign.mutate();
      }}
    >
      <SelectField label={`Driver for ${name}`} required value={driverId} onChange={(e) => setDriverId(e.target.value)}>
        <option value="">Choose a driver…</option>
        {drivers.data?.items.map((d) => (
          <option key={d.id} value={d.id}>
            {d.firstName} {d.lastName} — {d.vehicleType} {d.vehiclePlate} ({d.availability.toLowerCase()})
          </option>
        ))}
      </SelectField>
      <ErrorBox error={assign.error ?? drivers.error} />
      <BusyButton type="submit" busy={assign.isPending} disabled={!driverId} aria-label={`Assign ${name}`}>
        Assign
      </BusyButton>
    </form>
  );
}
