/**
 * Registers the app's entry points (timers, HTTP API, reboot notices). The orchestrations, the reboot
 * debounce among them, are registered with the activities in refresh.registrations.ts.
 */
import { registerKuredNotify } from './kured-notify.http.js';
import { registerReaperSchedule } from './reaper-schedule.timer.js';
import { registerRebootNoticeEventGrid } from './reboot-notice.eventgrid.js';
import { registerRebootNoticeQueue } from './reboot-notice.queue.js';
import { registerRefreshApi } from './refresh-api.http.js';
import { registerRefreshSchedule } from './refresh-schedule.timer.js';
import { registerRetirementSchedule } from './retirement-schedule.timer.js';

registerRefreshSchedule();
registerReaperSchedule();
registerRetirementSchedule();
registerRefreshApi();
registerRebootNoticeEventGrid();
registerRebootNoticeQueue();
registerKuredNotify();
